"""Questions about a document answered by reading it with OCR and asking the controller: the cards, the chain, the
failures; then a rendered invoice read by the real RapidOCR, answered by a scripted and by the embedded controller.

RapidOCR and the embedded controller are installed by CI, so the real tests fail, saying what to install, when
they are missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from rendered_text import rendered

from hugginggraph import HuggingGraphContext
from hugginggraph.cli import parser
from hugginggraph.graph.context import PlanningAids
from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, CombinedCatalog, InMemoryCatalog
from hugginggraph.tools.llama_cpp.local_llama import local_chat_model
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners import ocr
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.document_qa import (
    NO_TEXT,
    TASK,
    DocumentQARunner,
    document_qa_cards,
)
from hugginggraph.tools.runners.llm_runner import LLMRunner
from hugginggraph.tools.runners.llm_tasks import ReplyRejected
from hugginggraph.tools.tasks import TASKS

INVOICE = ("ACME Office Supplies", "Invoice number: 1187", "Date: 3 March 2025", "Total: 42.50 EUR")
"""The lines of the rendered invoice, and what the scripted reader reads."""

OCR_CARD = CatalogEntry(
    id="RapidAI/RapidOCR", task=ocr.TASK, library=ocr.LIBRARY, path="/models/rapidocr", source="pypi"
)


class Controller:
    """A scripted controller answering every question with `answer`; keeps the messages of every call."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.seen: list[Sequence[BaseMessage]] = []
        self.llm = ScriptedChatModel(chat=self._reply)

    def _reply(self, messages: Sequence[BaseMessage]) -> str:
        self.seen.append(messages)
        return json.dumps({"answer": self.answer})


def reader(*lines: str) -> ScriptedRunner:
    """A scripted OCR that reads `lines` in any picture, and finds no text when there are none."""

    async def read(card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        if not lines:
            raise ocr.NoTextFound(ocr.NO_TEXT.format(image=Path(inputs["image"]).name))
        return RunnerOutput(text="\n".join(lines))

    return ScriptedRunner({OCR_CARD.id: read})


async def ask(runner: DocumentQARunner, tmp_path: Path, **inputs: str) -> RunnerOutput:
    (card,) = document_qa_cards([OCR_CARD], runner.answerer.name)
    return await runner.run(card, TASK, inputs, ArtifactStore(tmp_path, 0))


def test_each_ocr_model_gives_one_card_paired_with_the_controller():
    answerer = LLMRunner(Controller("").llm)
    others = [
        CatalogEntry(id="org/blip", task=ocr.TASK),
        CatalogEntry(id="o", task="image-classification", library="rapidocr"),
    ]
    (card,) = document_qa_cards([OCR_CARD, *others], answerer.name)
    assert (card.id, card.task, card.library) == ("RapidAI/RapidOCR+controller-llm", TASK, "rapidocr+langchain")
    assert (card.path, card.source, card.downloads) == (OCR_CARD.path, "pypi+llm", 0)
    assert "RapidOCR" in card.description and len(card.description) <= 200  # all of it shows in selection
    assert DocumentQARunner(answerer).can_run(card)
    assert not DocumentQARunner(LLMRunner(Controller("").llm, name="other-llm")).can_run(card)
    assert not answerer.can_run(card) and not ocr.RapidOCRRunner().can_run(card)
    assert not DocumentQARunner(answerer).can_run(CatalogEntry(id="impira/layoutlm-document-qa", task=TASK))


async def test_the_controller_answers_from_the_text_read_with_its_question_answering_prompt(tmp_path: Path):
    controller, ocr_runner = Controller("42.50 EUR"), reader(*INVOICE)
    runner = DocumentQARunner(LLMRunner(controller.llm), ocr_runner)
    out = await ask(runner, tmp_path, image="invoice.png", text=" What is the total? ")
    document = "\n".join(INVOICE)
    assert ocr_runner.calls == [(OCR_CARD.id, ocr.TASK)]
    (messages,) = controller.seen
    expected = runner.answerer.messages("question-answering", {"text": "What is the total?", "context": document})
    assert [message.text for message in messages] == [message.text for message in expected]
    start = document.index("42.50 EUR")
    assert out.text == "42.50 EUR"
    assert out.data == {"answer": "42.50 EUR", "start": start, "end": start + 9, "document_text": document}


async def test_an_answer_that_is_not_in_the_document_fails(tmp_path: Path):
    runner = DocumentQARunner(LLMRunner(Controller("100 EUR").llm), reader(*INVOICE))
    with pytest.raises(ReplyRejected, match="the answer '100 EUR' is not in the passage"):
        await ask(runner, tmp_path, image="invoice.png", text="What is the total?")


async def test_a_picture_without_text_fails_without_asking_the_controller(tmp_path: Path):
    controller = Controller("anything")
    runner = DocumentQARunner(LLMRunner(controller.llm), reader())
    with pytest.raises(ocr.NoTextFound) as failure:
        await ask(runner, tmp_path, image="/photos/beach.jpg", text="What is the total?")
    message = str(failure.value)
    assert message.startswith("no text was found in beach.jpg: this model answers from the text it reads")
    assert "captioning" not in message and controller.llm.calls == []


def test_the_no_text_message_names_a_real_task_and_real_settings():
    assert re.findall(r"--[a-z-]+", NO_TEXT) == ["--hub", "--models-dir"]
    assert "visual-question-answering" in NO_TEXT and "visual-question-answering" in TASKS
    args = parser().parse_args(["run", "what is on photo.png?", "--hub", "--models-dir", "saved"])
    assert args.hub and args.models_dir == [Path("saved")]


@pytest.mark.parametrize(
    ("task", "inputs", "reason"),
    [
        (TASK, {"text": "What is the total?"}, 'needs the path of a document\'s picture in "image"'),
        (TASK, {"image": "invoice.png", "text": "  "}, 'needs the question in "text"'),
        ("visual-question-answering", {"image": "invoice.png", "text": "Total?"}, f"it does {TASK}"),
    ],
)
async def test_missing_arguments_or_another_task_fail_before_any_reading(
    tmp_path: Path, task: str, inputs: dict[str, str], reason: str
):
    ocr_runner = reader(*INVOICE)
    runner = DocumentQARunner(LLMRunner(Controller("42.50 EUR").llm), ocr_runner)
    (card,) = document_qa_cards([OCR_CARD], runner.answerer.name)
    with pytest.raises(ValueError, match=re.escape(reason)):
        await runner.run(card, task, inputs, ArtifactStore(tmp_path, 0))
    assert ocr_runner.calls == []


# --- the real RapidOCR, and the real embedded controller ---------------------------------------------------


@pytest.fixture(scope="module")
def ocr_card(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    """The installed RapidOCR's card; fails, saying what to install, when it is missing."""
    models = [model for model in OFFLINE_MODELS if model.library == ocr.LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.fail(
            f"RapidOCR is not installed ({needed}): hugginggraph models install-offline; pip install {ocr.OCR_EXTRA}"
        )
    (card,) = offline_model_cards(tmp_path_factory.mktemp("data"), models)
    return card


@pytest.fixture(scope="module")
def rapidocr() -> ocr.RapidOCRRunner:
    """One reader for the module's tests, so the OCR models load once."""
    return ocr.RapidOCRRunner()


@pytest.fixture(scope="module")
def invoice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`INVOICE` printed at an ordinary size (24 px letters), as a PNG."""
    return rendered(INVOICE, tmp_path_factory.mktemp("images") / "invoice.png", size=(720, 336), letters=24, spacing=60)


async def ask_real(
    runner: DocumentQARunner, ocr_card: CatalogEntry, image: Path, question: str, tmp_path: Path
) -> RunnerOutput:
    (card,) = document_qa_cards([ocr_card], runner.answerer.name)
    return await runner.run(card, TASK, {"image": str(image), "text": question}, ArtifactStore(tmp_path, 0))


@pytest.mark.slow
async def test_the_real_ocr_hands_the_rendered_invoice_to_the_controller(
    ocr_card, rapidocr, invoice: Path, tmp_path: Path
):
    controller = Controller("42.50 EUR")
    runner = DocumentQARunner(LLMRunner(controller.llm), rapidocr)
    out = await ask_real(runner, ocr_card, invoice, "What is the total?", tmp_path)
    assert out.data["document_text"].splitlines() == list(INVOICE)
    (messages,) = controller.seen
    assert all(line in messages[-1].text for line in INVOICE)
    assert out.text == "42.50 EUR"


@pytest.mark.slow
async def test_a_blank_page_fails_with_the_reason(ocr_card, rapidocr, tmp_path: Path):
    from PIL import Image

    page = tmp_path / "blank.png"
    Image.new("RGB", (400, 300), "white").save(page)
    controller = Controller("anything")
    with pytest.raises(ocr.NoTextFound, match=r"no text was found in blank\.png: this model answers"):
        await ask_real(
            DocumentQARunner(LLMRunner(controller.llm), rapidocr), ocr_card, page, "What is the total?", tmp_path
        )
    assert controller.seen == []


@pytest.mark.slow
async def test_a_planned_question_about_a_scan_is_answered_through_the_graph(
    ocr_card, rapidocr, invoice: Path, run_graph, tmp_path: Path
):
    """The plan's `image` and `text` reach the runner as validation and the executor resolve them, from a catalog
    wired as `defaults` would be: the OCR model, then the controller's cards with this one among them."""
    (tmp_path / "scan.png").write_bytes(invoice.read_bytes())
    plan = [{"task": TASK, "id": 0, "dep": [-1], "args": {"image": "scan.png", "text": "What is the total?"}}]
    llm = ScriptedChatModel(plan=plan, chat=json.dumps({"answer": "42.50 EUR"}), respond="The total is 42.50 EUR.")
    answerer = LLMRunner(llm)
    controller_cards = [*answerer.cards(), *document_qa_cards([ocr_card], answerer.name)]
    context = HuggingGraphContext(
        llm=llm,
        catalog=CombinedCatalog([InMemoryCatalog([ocr_card]), InMemoryCatalog(controller_cards)]),
        runners=[rapidocr, answerer, DocumentQARunner(answerer, rapidocr)],
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        planning=PlanningAids(demos="static"),
    )
    out = await run_graph(context, request="What is the total on scan.png?")
    (result,) = out["results"].values()
    assert result.status == "ok", result.error
    assert (result.model_id, result.text) == ("RapidAI/RapidOCR+controller-llm", "42.50 EUR")
    assert "Total: 42.50 EUR" in result.data["document_text"]


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory):
    """The default embedded controller, its weights joined into a temporary data dir; when llama-cpp-python or
    the weights are missing, `ControllerNotInstalled` fails the tests with the command that installs them."""
    return local_chat_model(DEFAULT_MODEL.removeprefix("local:"), data_dir=tmp_path_factory.mktemp("llm"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("question", "answer"), [("What is the total amount due?", "42.50"), ("What is the invoice number?", "1187")]
)
async def test_the_embedded_controller_answers_from_the_invoice(
    controller, ocr_card, rapidocr, invoice: Path, tmp_path: Path, question: str, answer: str
):
    out = await ask_real(DocumentQARunner(LLMRunner(controller), rapidocr), ocr_card, invoice, question, tmp_path)
    assert answer in out.text and out.text in out.data["document_text"]


@pytest.mark.parametrize("isolate", [False, True])
def test_the_default_runners_read_documents_with_the_in_process_ocr_runner(isolate: bool):
    from hugginggraph.context_assembly import default_runners

    runners = default_runners(LLMRunner(Controller("").llm), isolate=isolate)
    (document_qa,) = [runner for runner in runners if isinstance(runner, DocumentQARunner)]
    in_process = [runner for runner in runners if isinstance(runner, ocr.RapidOCRRunner)]
    assert isinstance(document_qa.reader, ocr.RapidOCRRunner)
    assert in_process == ([document_qa.reader] if not isolate else [])

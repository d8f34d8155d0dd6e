"""Questions about a scanned document answered offline: RapidOCR reads the page, the controller answers from the text.

HuggingGPT's experts for `document-question-answering` (LayoutLM, Donut) are Hub models, absent on a machine
without the Hub. Both halves of the task are here already: `RapidOCRRunner` reads the text written in a picture,
and `LLMRunner` answers a question from a passage, extractively (an answer must be words of the passage, else the
task fails). This runner chains the two through their own `run`, so the reading order, the confidence floor, the
prompt and the checks on the answer stay theirs alone. The answer is the output's text; the text that was read is
in its data, so a user can see what the answer came from.

Reading the page as lines loses its layout (which figure sits in which column) and its pictures, so a document
model that sees the page is the better expert: the cards here go into the catalog with the controller's own, after
every real model.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners import llm_runner, ocr
from hugginggraph.tools.runners.base import ModelRunner, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.llm_runner import CONTROLLER_NAME, LLMRunner
from hugginggraph.tools.runners.ocr import NoTextFound, RapidOCRRunner

TASK = "document-question-answering"

ANSWER_TASK = "question-answering"
"""The controller's task that answers from the text read: extractive, so an answer is words of the document."""

LIBRARY = f"{ocr.LIBRARY}+{llm_runner.LIBRARY}"
"""The libraries that run the cards here: the reader's, then the controller's."""

DESCRIPTION = (
    "Reads the document with RapidOCR, then the controller LLM answers from the text read, in the document's own "
    "words. Printed text only: it sees no layout or pictures."
)
"""Within the 200 characters the selection prompt shows of a model."""

NO_TEXT = (
    "no text was found in {image}: this model answers from the text it reads in a document, and the picture holds "
    "none. A question about what a photo shows is visual-question-answering, which needs a model of its own: the "
    "Hugging Face Hub's (--hub) or a saved one (--models-dir)"
)


def document_qa_cards(readers: Iterable[CatalogEntry], controller: str = CONTROLLER_NAME) -> list[CatalogEntry]:
    """A card for each RapidOCR card among `readers`, paired with the controller named `controller` (an
    `LLMRunner`'s name); named `<reader id>+<controller>`, so that each pair has a card of its own and the reader is
    found again."""
    return [
        CatalogEntry(
            id=f"{reader.id}+{controller}",
            task=TASK,
            description=DESCRIPTION,
            path=reader.path,
            library=LIBRARY,
            source=f"{reader.source}+llm",
        )
        for reader in readers
        if reader.library == ocr.LIBRARY and reader.task == ocr.TASK
    ]


class DocumentQARunner(OneTaskRunner):
    """Runs the cards of `document_qa_cards` made with the same `answerer`: the picture at `inputs["image"]` read
    by `reader`, the question in `inputs["text"]` answered by `answerer` from the text read.

    `reader` runs RapidOCR cards for `image-to-text` (by default a `RapidOCRRunner` of its own; pass the catalog's
    image-to-text runner to keep one copy of the OCR models loaded). It must run in this process: its `NoTextFound`
    is how a page without text is told from a reader that failed.
    """

    library = LIBRARY
    task = TASK
    reads = ("image", "the path of a document's picture")

    def __init__(self, answerer: LLMRunner, reader: ModelRunner | None = None) -> None:
        self.answerer = answerer
        self.reader = reader or RapidOCRRunner()
        self.answer_card = next(card for card in answerer.cards() if card.task == ANSWER_TASK)
        """The controller's card for `ANSWER_TASK`, which `answerer` is called with."""

    @property
    def suffix(self) -> str:
        """How this runner's card ids end: with the name of its controller."""
        return f"+{self.answerer.name}"

    def can_run(self, card: CatalogEntry) -> bool:
        return super().can_run(card) and card.id.endswith(self.suffix)

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        """The answer as text; `data` holds it with its span in the text read (`start`, `end`) and that text
        (`document_text`). Raises `NoTextFound` for a picture without text, `ReplyRejected` for an answer that is
        not in it."""
        image = self.argument(card, task, inputs)
        question = inputs.get("text", "").strip()
        if not question:
            raise ValueError(f'{TASK} needs the question in "text"')
        document = await self._read(card, image, artifacts)
        passage = {"text": question, "context": document}
        answer = await self.answerer.run(self.answer_card, ANSWER_TASK, passage, artifacts)
        return RunnerOutput(text=answer.text, data={**answer.data, "document_text": document})

    async def _read(self, card: CatalogEntry, image: str, artifacts: ArtifactStore) -> str:
        """The text written in the picture at `image`, by the reader of `card`."""
        reader = CatalogEntry(id=card.id.removesuffix(self.suffix), task=ocr.TASK, library=ocr.LIBRARY, path=card.path)
        try:
            reading = await self.reader.run(reader, ocr.TASK, {"image": image}, artifacts)
        except NoTextFound as error:
            raise NoTextFound(NO_TEXT.format(image=Path(image).name)) from error
        return reading.text

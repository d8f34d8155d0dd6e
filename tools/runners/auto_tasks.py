"""Tasks that transformers 5.x dropped from `pipeline()` (or renamed), run with the Auto classes instead.

Summarization and translation are `generate` on a sequence-to-sequence model; extractive question answering is
the best span under the start/end logits; visual question answering is an answer classifier (ViLT);
`image-to-text` is `generate` on an image-text-to-text model with no prompt (5.x's `image-text-to-text`
pipeline insists on one). Each call returns what the 4.x pipeline returned, so `outputs.py` needs no special
cases and the Hub task ids stay the names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from hugginggraph.tools.runners.task_inputs import Inputs, Predictor, question_and_context, read_image
from hugginggraph.tools.runners.transformers_names import transformers_names

if TYPE_CHECKING:
    import torch

MAX_ANSWER_TOKENS = 15
"""The longest answer span extractive question answering considers (the 4.x pipeline's default)."""

TOP_ANSWERS = 5
"""How many answers an answer classifier reports, best first."""


class Loaded(NamedTuple):
    """A model and what turns inputs into its tensors and its tokens back into text."""

    model: Any
    processor: Any
    """A tokenizer for text models, a processor (image processor + tokenizer) for vision-language models."""


@dataclass(frozen=True)
class AutoTask:
    """A task run by hand with a `transformers` Auto model class and its tokenizer or processor."""

    library: ClassVar[str] = "transformers"

    model_class: str
    """The Auto class that loads the model, e.g. `AutoModelForSeq2SeqLM`."""
    processor_class: str
    """`AutoTokenizer` or `AutoProcessor`."""
    call: Callable[[Loaded, Inputs], Any]
    """Runs the loaded model on the task's arguments and returns the output in the 4.x pipeline's shape."""

    def load(self, model: str, device: str) -> Predictor:
        model_class, processor_class = transformers_names(self.model_class, self.processor_class)
        loaded = Loaded(
            model_class.from_pretrained(model, trust_remote_code=False).to(device).eval(),
            processor_class.from_pretrained(model, trust_remote_code=False),
        )
        return partial(self._predict, loaded)

    def _predict(self, loaded: Loaded, inputs: Inputs) -> Any:
        import torch

        with torch.inference_mode():
            return self.call(loaded, inputs)


def _summarize(loaded: Loaded, inputs: Inputs) -> list[dict[str, str]]:
    return [{"summary_text": _rewrite(loaded, inputs["text"], "summarization")}]


def _translate(loaded: Loaded, inputs: Inputs) -> list[dict[str, str]]:
    return [{"translation_text": _rewrite(loaded, inputs["text"], "translation")}]


def _rewrite(loaded: Loaded, text: str, task: str) -> str:
    """`text` through a sequence-to-sequence model, with the lengths and beams of its generation config."""
    model, tokenizer = loaded
    encoded = tokenizer(_task_prefix(model.config, task) + text, truncation=True, return_tensors="pt")
    generated = model.generate(**encoded.to(model.device))
    return str(tokenizer.decode(generated[0], skip_special_tokens=True)).strip()


def _task_prefix(config: Any, task: str) -> str:
    """What T5-style models expect before the text ("summarize: "), from the config's `task_specific_params`.

    For translation that is the first `translation_<from>_to_<to>` entry: a model serves one language pair here.
    """
    for name, params in (getattr(config, "task_specific_params", None) or {}).items():
        if name == task or name.startswith(f"{task}_"):
            return str(params.get("prefix", ""))
    return ""


def _extract_answer(loaded: Loaded, inputs: Inputs) -> dict[str, Any]:
    """The span of the passage the model finds likeliest to answer the question (a passage longer than the
    model's input is cut; the answer must lie in what remains)."""
    import torch

    model, tokenizer = loaded
    question, context = question_and_context(inputs)
    encoded = tokenizer(question, context, truncation="only_second", return_offsets_mapping=True, return_tensors="pt")
    offsets = encoded.pop("offset_mapping")[0].tolist()
    in_context = torch.tensor([sequence == 1 for sequence in encoded.sequence_ids(0)])
    logits = model(**encoded.to(model.device))
    start, end, score = _best_span(logits.start_logits[0].cpu(), logits.end_logits[0].cpu(), in_context)
    first, last = offsets[start][0], offsets[end][1]
    return {"score": score, "start": first, "end": last, "answer": context[first:last]}


def _best_span(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor) -> tuple[int, int, float]:
    """The token span (start, end, probability) with start ≤ end < start + MAX_ANSWER_TOKENS, inside `allowed`."""
    import torch

    starts = start_logits.masked_fill(~allowed, float("-inf")).softmax(-1)
    ends = end_logits.masked_fill(~allowed, float("-inf")).softmax(-1)
    scores = torch.outer(starts, ends).triu().tril(MAX_ANSWER_TOKENS - 1)
    start, end = divmod(int(scores.argmax()), scores.shape[1])
    return start, end, float(scores[start, end])


def _classify_answer(loaded: Loaded, inputs: Inputs) -> list[dict[str, Any]]:
    """The likeliest answers from an answer classifier such as ViLT (answers are independent yes/no outputs,
    hence the sigmoid). The question is cut to the model's text positions."""
    model, processor = loaded
    encoded = processor(
        images=read_image(inputs["image"]),
        text=inputs["text"],
        truncation=True,
        max_length=model.config.max_position_embeddings,
        return_tensors="pt",
    )
    probabilities = model(**encoded.to(model.device)).logits[0].sigmoid()
    scores, ids = probabilities.topk(min(TOP_ANSWERS, probabilities.numel()))
    return [
        {"score": float(score), "answer": model.config.id2label[int(i)]} for score, i in zip(scores, ids, strict=True)
    ]


def _caption(loaded: Loaded, inputs: Inputs) -> list[dict[str, str]]:
    model, processor = loaded
    encoded = processor(images=read_image(inputs["image"]), return_tensors="pt")
    # Passed explicitly because BLIP hands generation to its text decoder, which would ignore the saved config.
    generated = model.generate(**encoded.to(model.device), generation_config=model.generation_config)
    return [{"generated_text": str(processor.batch_decode(generated, skip_special_tokens=True)[0]).strip()}]


AUTO_TASKS: dict[str, AutoTask] = {
    "summarization": AutoTask("AutoModelForSeq2SeqLM", "AutoTokenizer", _summarize),
    "translation": AutoTask("AutoModelForSeq2SeqLM", "AutoTokenizer", _translate),
    "question-answering": AutoTask("AutoModelForQuestionAnswering", "AutoTokenizer", _extract_answer),
    "visual-question-answering": AutoTask("AutoModelForVisualQuestionAnswering", "AutoProcessor", _classify_answer),
    "image-to-text": AutoTask("AutoModelForImageTextToText", "AutoProcessor", _caption),
}
"""Hub task id -> the Auto classes that load its models and how one call runs them."""

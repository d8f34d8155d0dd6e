from pathlib import Path

import pytest

from hugginggraph.planning.named_files import put_named_files


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for name in ("sign.png", "street.png", "memo.wav"):
        (tmp_path / name).write_bytes(b"x")
    return tmp_path


def task(**args: str) -> dict:
    return {"task": "image-to-text", "id": 0, "dep": [-1], "args": args}


def test_a_missing_file_becomes_the_one_file_of_its_kind_the_request_names(workspace: Path):
    plan = [task(image="flyer.png"), task(audio="example.wav", text="flyer.png")]
    assert put_named_files(plan, "read sign.png and memo.wav", workspace) == [
        task(image="sign.png"),
        task(audio="memo.wav", text="flyer.png"),  # text is not a media input: its words stay
    ]


@pytest.mark.parametrize(
    "request_text",
    [
        "compare sign.png with street.png",  # two images named: which one was meant is open
        "read flyer.png",  # the named file is not there either
        "describe the picture",  # no file named
    ],
)
def test_a_missing_file_stays_when_the_request_does_not_name_one_present_file_of_its_kind(
    workspace: Path, request_text: str
):
    plan = [task(image="flyer.png")]
    assert put_named_files(plan, request_text, workspace) == plan


@pytest.mark.parametrize("value", ["street.png", "<GENERATED>-0", "https://example.com/a.png", ""])
def test_present_files_references_and_addresses_stay(workspace: Path, value: str):
    plan = [task(image=value), "not a task", {"task": "x", "args": "not a mapping"}]
    assert put_named_files(plan, "describe sign.png", workspace) == plan

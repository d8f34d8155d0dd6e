"""Plan validation and repair: every bad shape becomes a recorded repair or a doomed task, never an exception."""

from pathlib import Path

import pytest

from hugginggraph.planning.plan_check import check_plan


def item(task_id, task="text-classification", dep=(-1,), **args):
    return {"id": task_id, "task": task, "dep": list(dep), "args": args or {"text": "hello"}}


def test_a_good_plan_passes_unchanged(tmp_path: Path):
    raw = [item(0), item(1, "summarization", dep=[0], text="<GENERATED>-0")]
    check = check_plan(raw, tmp_path)
    assert [t.id for t in check.tasks] == [0, 1]
    assert check.tasks[1].dep == [0]
    assert check.repairs == [] and check.doomed == {}


def test_dependencies_are_derived_from_references(tmp_path: Path):
    raw = [item(0), item(1, "summarization", dep=[-1], text="<GENERATED>-0"), item(2, dep=[0, 7])]
    check = check_plan(raw, tmp_path)
    deps = {t.id: t.dep for t in check.tasks}
    assert deps == {0: [], 1: [0], 2: []}
    assert any("added dependency on task 0" in r for r in check.repairs)
    assert any("removed dependency on 7" in r for r in check.repairs)
    assert "task 2: removed dependency on task 0, whose output it does not use" in check.repairs


def test_forward_reference_is_reordered_and_recorded(tmp_path: Path):
    raw = [item(0, "summarization", text="<GENERATED>-1"), item(1)]
    check = check_plan(raw, tmp_path)
    assert [t.id for t in check.tasks] == [1, 0]
    assert any("reordered" in r for r in check.repairs)
    assert check.doomed == {}


def test_cycle_dooms_its_members_and_keeps_the_rest(tmp_path: Path):
    raw = [
        item(0, text="<GENERATED>-1"),
        item(1, text="<GENERATED>-0"),
        item(2),
        item(3, "summarization", text="<GENERATED>-1"),
    ]
    check = check_plan(raw, tmp_path)
    assert set(check.doomed) == {0, 1}
    assert "cycle" in check.doomed[0]
    order = [t.id for t in check.tasks]
    assert order[0] == 2 and order.index(3) > order.index(1)


def test_self_reference_and_missing_reference_doom_the_task(tmp_path: Path):
    raw = [item(0, text="<GENERATED>-0"), item(1, text="<GENERATED>-9"), item(2)]
    check = check_plan(raw, tmp_path)
    assert "its own output" in check.doomed[0]
    assert "task 9, which the plan does not have" in check.doomed[1]
    assert 2 not in check.doomed


def test_unknown_task_is_doomed_with_the_known_list(tmp_path: Path):
    check = check_plan([item(0, "make-coffee"), item(1)], tmp_path)
    assert "unknown task type 'make-coffee'" in check.doomed[0]
    assert "image-to-text" in check.doomed[0]
    assert 1 not in check.doomed


def test_task_names_are_normalised(tmp_path: Path):
    check = check_plan([item(0, "Text_Classification")], tmp_path)
    assert check.tasks[0].task == "text-classification"
    assert check.doomed == {}


def test_duplicate_and_missing_ids_are_renumbered(tmp_path: Path):
    raw = [item(0), item(0, "summarization"), {"task": "fill-mask", "args": {"text": "a [MASK]"}}]
    check = check_plan(raw, tmp_path)
    assert sorted(t.id for t in check.tasks) == [0, 1, 2]
    assert any("repeats id 0" in r for r in check.repairs)
    assert any("no valid id" in r for r in check.repairs)


def test_missing_input_file_dooms_only_that_task(tmp_path: Path):
    (tmp_path / "cat.png").write_bytes(b"png")
    raw = [
        item(0, "image-classification", image="cat.png"),
        item(1, "image-classification", image="dog.png"),
    ]
    check = check_plan(raw, tmp_path)
    assert check.tasks[0].args["image"] == str((tmp_path / "cat.png").resolve())
    assert "input file 'dog.png' not found" in check.doomed[1]
    assert 0 not in check.doomed


def test_a_text_that_names_a_missing_text_file_dooms_only_that_task(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("Ship on Friday.", encoding="utf-8")
    raw = [item(0, "summarization", text="notes.txt"), item(1, "summarization", text="minutes.md")]
    check = check_plan(raw, tmp_path)
    assert check.tasks[0].args["text"] == "notes.txt"  # read by the executor, not here
    assert "input file 'minutes.md' not found" in check.doomed[1]
    assert 0 not in check.doomed


def test_media_references_and_urls_are_not_files(tmp_path: Path):
    raw = [
        item(0, "image-to-image", image="https://example.org/cat.png", text="as a watercolour"),
        item(1, "image-classification", dep=[0], image="<node-0>"),
    ]
    check = check_plan(raw, tmp_path)
    assert check.doomed == {}
    assert check.tasks[1].args["image"] == "<GENERATED>-0"


@pytest.mark.parametrize(
    "raw",
    [
        ["not a task", 42, None],
        [{"id": 0}],
        [{"task": "", "id": 1}],
        [{"task": ["text-classification"], "id": 0}],
    ],
)
def test_unusable_items_are_dropped_with_a_note(raw, tmp_path: Path):
    check = check_plan(raw, tmp_path)
    assert check.tasks == []
    assert check.repairs and all("dropped" in r for r in check.repairs)


def test_wrong_types_are_coerced(tmp_path: Path):
    raw = [
        {"task": "text-classification", "id": "0", "dep": "-1", "args": {"text": 5}},
        {"task": "summarization", "id": 1.0, "dep": ["0", "x"], "args": ["<GENERATED>-0"]},
    ]
    check = check_plan(raw, tmp_path)
    assert [t.args for t in check.tasks] == [{"text": "5"}, {"text": "<GENERATED>-0"}]
    assert check.tasks[1].dep == [0]
    assert check.doomed == {}


def test_an_oddly_named_single_argument_is_taken_as_the_input(tmp_path: Path):
    check = check_plan([{"task": "summarization", "id": 0, "args": {"sentence": "long text"}}], tmp_path)
    assert check.tasks[0].args == {"text": "long text"}


def test_a_task_without_its_input_is_doomed(tmp_path: Path):
    check = check_plan([{"task": "visual-question-answering", "id": 0, "args": {}}], tmp_path)
    assert "has no image or text argument" in check.doomed[0]


def test_media_the_task_does_not_read_are_dropped(tmp_path: Path):
    (tmp_path / "cat.png").write_bytes(b"png")
    raw = [
        item(0),
        item(1, "image-to-text", image="cat.png", audio="<GENERATED>-0"),
        item(2, "image-to-text", image="cat.png", video="missing.mp4", audio="<GENERATED>-2"),
    ]
    check = check_plan(raw, tmp_path)
    assert [task.args for task in check.tasks[1:]] == [{"image": str(tmp_path / "cat.png")}] * 2
    assert check.tasks[1].dep == []  # it no longer waits for task 0, nor is skipped if task 0 fails
    assert "task 1: dropped its audio '<GENERATED>-0': image-to-text does not read audio" in check.repairs
    assert check.doomed == {}  # neither for a file it would never open nor for its own output it would never read


def test_other_arguments_the_runner_reads_keep_their_references(tmp_path: Path):
    raw = [item(0), item(1, "question-answering", dep=[0], text="who won?", context="<GENERATED>-0")]
    check = check_plan(raw, tmp_path)
    assert check.tasks[1].args == {"text": "who won?", "context": "<GENERATED>-0"}
    assert check.tasks[1].dep == [0] and check.repairs == [] and check.doomed == {}


def test_a_reference_of_the_wrong_kind_takes_the_last_earlier_task_of_the_right_kind(tmp_path: Path):
    raw = [
        item(0, "text-to-image", text="a red fox"),
        item(1, "text-to-image", text="a blue fox"),
        item(2, "image-to-text", dep=[1], image="<GENERATED>-1"),
        item(3, "visual-question-answering", dep=[2], image="<GENERATED>-2", text="what colour is the fox?"),
    ]
    check = check_plan(raw, tmp_path)
    assert check.tasks[3].args["image"] == "<GENERATED>-1"  # the caption (text) is not an image: the fox picture is
    assert check.tasks[3].dep == [1]  # the dependency follows the reference: the caption is no longer read
    assert any("task 3: its image was task 2's output, text; took task 1's" in r for r in check.repairs)
    assert check.doomed == {}


def test_a_task_reading_its_own_output_reads_the_last_earlier_task_of_that_kind(tmp_path: Path):
    raw = [
        item(0, "text-to-image", text="a red fox"),
        item(1, "image-to-text", image="<GENERATED>-0"),
        item(2, "text-to-speech", dep=[2], text="<GENERATED>-2"),
    ]
    check = check_plan(raw, tmp_path)
    assert check.tasks[2].args == {"text": "<GENERATED>-1"} and check.tasks[2].dep == [1]
    assert "task 2: its text was its own output; took task 1's" in check.repairs
    assert check.doomed == {}


def test_a_reference_of_the_wrong_kind_with_no_earlier_fit_dooms_only_that_task(tmp_path: Path):
    raw = [item(0), item(1, "text-to-speech", text="<GENERATED>-0"), item(2, "image-to-text", image="<GENERATED>-1")]
    check = check_plan(raw, tmp_path)
    assert check.doomed == {2: "task 2 reads image, but task 1 makes audio and no earlier task makes image"}
    assert check.tasks[-1].args == {} and check.tasks[-1].dep == []  # it fails at once, not after task 1 ran


@pytest.fixture
def workspace_with_escapes(tmp_path: Path) -> Path:
    """A workspace holding one real picture, beside a secret file and with symlinks that lead out to it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "cat.png").write_bytes(b"png")
    (tmp_path / "secret.png").write_bytes(b"secret")
    (workspace / "link.png").symlink_to(tmp_path / "secret.png")
    (workspace / "outside").symlink_to(tmp_path, target_is_directory=True)
    return workspace


@pytest.mark.parametrize("value", ["../secret.png", "SECRET_ABSOLUTE", "link.png", "outside/secret.png", "~/x.png"])
def test_input_files_outside_the_workspace_are_refused(value, workspace_with_escapes: Path):
    value = value.replace("SECRET_ABSOLUTE", str(workspace_with_escapes.parent / "secret.png"))
    raw = [item(0, "image-classification", image=value), item(1, "image-classification", image="cat.png")]
    check = check_plan(raw, workspace_with_escapes)
    assert check.doomed.keys() == {0}
    assert "outside the workspace" in check.doomed[0] or "not found" in check.doomed[0]
    assert check.tasks[1].args["image"] == str(workspace_with_escapes / "cat.png")


def test_an_absolute_path_inside_the_workspace_is_fine(workspace_with_escapes: Path):
    picture = str(workspace_with_escapes / "cat.png")
    check = check_plan([item(0, "image-classification", image=picture)], workspace_with_escapes)
    assert check.doomed == {} and check.tasks[0].args["image"] == picture


@pytest.mark.parametrize("value", ["<GENERATED>-0.png", "/etc/<GENERATED>-0", "<GENERATED>-0<GENERATED>-0"])
def test_a_media_argument_that_splices_a_reference_into_a_path_is_doomed(value, tmp_path: Path):
    """The executor would splice task 0's text into it and read whatever file that text names."""
    raw = [item(0, "text-generation"), item(1, "image-classification", dep=[0], image=value)]
    check = check_plan(raw, tmp_path)
    assert "must be one file or one <GENERATED>-k" in check.doomed[1]


@pytest.mark.parametrize(
    "raw",
    [
        [{"task": "summarization", "id": 0, "args": [{"name": ["x"], "value": "a"}]}],
        [{"task": "summarization", "id": 0, "args": [{"name": 5, "value": 1}, "b"]}],
        [{"task": "summarization", "id": "9" * 5000, "args": {"text": "x"}}],
        [{"task": "summarization", "id": 10**30, "dep": [1e300], "args": {"text": "<GENERATED>-" + "9" * 5000}}],
    ],
)
def test_shapes_that_once_crashed_validation(raw, tmp_path: Path):
    """Found by tests/planning/test_plan_check_properties.py: unhashable or mixed argument names in a list, ids and
    references too long for Python to read as integers, ids too large for a checkpoint."""
    check = check_plan(raw, tmp_path)
    assert all(0 <= task.id < 10**18 for task in check.tasks)


def test_a_deeply_nested_value_is_previewed_not_dumped(tmp_path: Path):
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    check = check_plan(
        [nested, {"task": "summarization", "id": 0, "dep": [nested], "args": {"text": nested}}], tmp_path
    )
    assert all(len(note) < 300 for note in check.repairs)

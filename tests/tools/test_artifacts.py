"""Files in and out of a run: inputs only from inside the workspace, outputs only inside the run's folder."""

from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import (
    MAX_TEXT_FILE_BYTES,
    ArtifactStore,
    InputFileError,
    paths_from_thread,
    read_text_file,
    resolve_input_file,
    run_folder,
    turn_folder,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "sub").mkdir(parents=True)
    (root / "cat.png").write_bytes(b"png")
    (root / "sub" / "dog.png").write_bytes(b"png")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "inner-link.png").symlink_to(root / "cat.png")
    (root / "outer-link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "outer-dir").symlink_to(tmp_path, target_is_directory=True)
    return root


@pytest.mark.parametrize("value", ["cat.png", "./cat.png", "sub/../cat.png", "inner-link.png", "WORKSPACE/cat.png"])
def test_files_inside_the_workspace_resolve_to_their_real_path(value, workspace: Path):
    path = resolve_input_file(value.replace("WORKSPACE", str(workspace)), workspace)
    assert path == (workspace / "cat.png").resolve()


@pytest.mark.parametrize(
    "value",
    ["../secret.txt", "sub/../../secret.txt", "SECRET", "outer-link.txt", "outer-dir/secret.txt", "/etc/hostname"],
)
def test_files_outside_the_workspace_are_refused_with_a_clear_error(value, workspace: Path):
    value = value.replace("SECRET", str(workspace.parent / "secret.txt"))
    with pytest.raises(InputFileError, match=r"is outside the workspace .*: copy it into the workspace"):
        resolve_input_file(value, workspace)


@pytest.mark.parametrize(("value", "problem"), [("dog.png", "not found"), ("cat.png\x00.txt", "not a usable path")])
def test_missing_and_unusable_paths_are_clear_errors(value, problem, workspace: Path):
    with pytest.raises(InputFileError, match=problem):
        resolve_input_file(value, workspace)


@pytest.mark.parametrize("thread_id", ["../../x", "/tmp/x", "a/b", "..", ".", "", "x" * 500, "ü", "a\x00b"])
def test_every_thread_id_gets_a_folder_inside_the_artifacts_folder(thread_id, tmp_path: Path):
    folder = run_folder(tmp_path, thread_id)
    assert folder.parent == tmp_path and folder.name not in ("", ".", "..") and len(folder.name) < 100
    assert run_folder(tmp_path, thread_id) == folder  # a resumed run writes where it started


def test_plain_thread_ids_keep_their_name_and_odd_ones_stay_apart(tmp_path: Path):
    assert run_folder(tmp_path, "3f2a9c").name == "3f2a9c"
    assert run_folder(tmp_path, "a/b") != run_folder(tmp_path, "a-b") != run_folder(tmp_path, "a:b")


@pytest.mark.parametrize("suffix", ["/../../x.wav", ".wav/../x", "", "wav", "." + "a" * 20])
def test_an_artifact_suffix_cannot_leave_the_run_folder(suffix, tmp_path: Path):
    with pytest.raises(ValueError, match="an artifact suffix is a dot and letters or digits"):
        ArtifactStore(tmp_path, 0).save_bytes(b"data", suffix, "audio")


@pytest.mark.parametrize("value", ["notes.txt", " notes.txt ", "./sub/notes.md", "WORKSPACE/notes.txt"])
def test_text_that_names_a_text_file_is_read_as_its_contents(value, workspace: Path):
    (workspace / "notes.txt").write_text("Ship on Friday.", encoding="utf-8")
    (workspace / "sub" / "notes.md").write_text("Ship on Friday.", encoding="utf-8")
    assert read_text_file(value.replace("WORKSPACE", str(workspace)), workspace) == "Ship on Friday."


def test_a_question_about_a_text_file_is_asked_of_its_contents(workspace: Path):
    (workspace / "notes.txt").write_text("The meeting starts at 10:30.\n", encoding="utf-8")
    asked = read_text_file("notes.txt Question: When does the meeting start?", workspace)
    assert asked == "The meeting starts at 10:30. Question: When does the meeting start?"


@pytest.mark.parametrize(
    "value", ["Summarize notes.txt", "notes", "cat.png", "<GENERATED>-0", "a.txt b.txt", "notes.txt says hi"]
)
def test_other_text_is_not_a_file_name(value, workspace: Path):
    assert read_text_file(value, workspace) is None


@pytest.mark.parametrize(
    ("name", "contents", "problem"),
    [
        ("missing.txt", None, "not found"),
        ("../secret.txt", None, "outside the workspace"),
        ("outer-link.txt", None, "outside the workspace"),
        ("big.txt", b"x" * (MAX_TEXT_FILE_BYTES + 1), "text files are read up to"),
        ("latin.txt", "café".encode("latin-1"), "not UTF-8 text"),
    ],
)
def test_unusable_text_files_are_clear_errors(name, contents, problem, workspace: Path):
    if contents is not None:
        (workspace / name).write_bytes(contents)
    with pytest.raises(InputFileError, match=problem):
        read_text_file(name, workspace)


def test_each_turn_writes_inside_its_threads_folder(tmp_path: Path):
    thread = run_folder(tmp_path, "../x")
    assert turn_folder(tmp_path, "../x", 1).parent == thread == turn_folder(tmp_path, "../x", 2).parent
    assert turn_folder(tmp_path, "../x", 1) != turn_folder(tmp_path, "../x", 2)


def test_a_file_an_earlier_turn_made_is_read_from_the_threads_folder_only(workspace: Path, tmp_path: Path):
    thread = run_folder(tmp_path / "artifacts", "t")
    made = turn_folder(tmp_path / "artifacts", "t", 1) / "task-0-text-to-speech.wav"
    theirs = turn_folder(tmp_path / "artifacts", "u", 1) / "task-0-text-to-speech.wav"
    record = thread / "turn-1" / "calls" / "x" / "a.wav"
    for path in (made, theirs, record):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"RIFF")
    named = paths_from_thread(f"I read it aloud: {made}.", thread)
    assert named == "I read it aloud: turn-1/task-0-text-to-speech.wav."
    assert resolve_input_file("turn-1/task-0-text-to-speech.wav", workspace, thread) == made.resolve()
    assert resolve_input_file(str(made), workspace, thread) == made.resolve()  # as validation left it
    for elsewhere in (str(theirs), "../u/turn-1/task-0-text-to-speech.wav", str(record), "turn-1/missing.wav"):
        with pytest.raises(InputFileError):
            resolve_input_file(elsewhere, workspace, thread)
    with pytest.raises(InputFileError, match="outside the workspace"):
        resolve_input_file(str(made), workspace)  # no thread: the workspace alone

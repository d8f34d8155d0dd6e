"""The `run --approve` dialogue: the user answers a paused run's `ApprovalRequest` on the terminal.

    Approve? [y]es / [n]o / [e]dit
    y   run the plan as shown
    n   end the run without running any model; an optional reason is asked for
    e   edit, one change per line, then an empty line:
          ID ARG=VALUE     set an argument of task ID        0 text=a calmer sentence
          ID model=MODEL   run task ID with that model        1 model=tiny-summarization

Line edits rather than a JSON plan in $EDITOR: they work the same in a terminal, over SSH and from a pipe, and
cover what a user changes at this point (an argument, a model). When stdin is not a terminal the answers are read
from it line by line and echoed, so scripts and tests drive the dialogue; the end of input leaves the run paused
for `hugginggraph resume THREAD` to ask again.
"""

from __future__ import annotations

import re
import sys

from hugginggraph.nodes.approval import ApprovalDecision, ApprovalRequest

QUESTION = "Approve? [y]es / [n]o / [e]dit: "
EDIT_HELP = "Edits, one per line (`ID ARG=VALUE` or `ID model=MODEL`), then an empty line:"
_EDIT = re.compile(r"\s*(\d+)\s+([\w-]+)\s*=\s*(.*?)\s*")


class NoAnswer(Exception):
    """The input ended before the user answered."""


def read_line(prompt: str) -> str:
    """One answer: from the terminal with line editing, else from stdin, echoed after the prompt."""
    if sys.stdin.isatty():
        try:
            return input(prompt).strip()
        except EOFError as error:
            raise NoAnswer from error
    print(prompt, end="", flush=True)
    line = sys.stdin.readline()
    if not line:
        print()
        raise NoAnswer
    print(line.rstrip("\n"))
    return line.strip()


def ask(request: ApprovalRequest) -> ApprovalDecision:
    """The user's decision on `request`, asked until it is one. Raises NoAnswer at the end of input."""
    while True:
        answer = read_line(QUESTION).lower()
        if answer in ("y", "yes"):
            return ApprovalDecision(action="approve")
        if answer in ("n", "no"):
            return ApprovalDecision(action="reject", feedback=read_line("Why (optional): "))
        if answer in ("e", "edit"):
            print(EDIT_HELP)
            lines = []
            while line := read_line("edit> "):
                lines.append(line)
            try:
                return edit_decision(request, lines)
            except ValueError as error:
                print(f"Not applied: {error}")
        else:
            print("Answer y, n or e.")


def edit_decision(request: ApprovalRequest, lines: list[str]) -> ApprovalDecision:
    """The edit that `lines` describe. Raises ValueError naming the first line that is not an edit of this plan."""
    args = {task.id: dict(task.args) for task in request.tasks}
    models: dict[int, str] = {}
    if not lines:
        raise ValueError("no edit given")
    for line in lines:
        match = _EDIT.fullmatch(line)
        if match is None:
            raise ValueError(f"{line!r} is not `ID ARG=VALUE` or `ID model=MODEL`")
        task_id, key, value = int(match[1]), match[2], match[3]
        if task_id not in args:
            raise ValueError(f"the plan has no task {task_id}")
        if key == "model":
            models[task_id] = value
        else:
            args[task_id][key] = value
    changed = any(args[task.id] != task.args for task in request.tasks)
    if not (changed or models):
        raise ValueError("the edits change nothing")
    tasks = [{**task.model_dump(include={"id", "task", "dep"}), "args": args[task.id]} for task in request.tasks]
    return ApprovalDecision(action="edit", tasks=tasks if changed else None, models=models)

"""`hugginggraph eval`: the planner measured on TaskBench-format records (hugginggraph.taskbench), running nothing."""

from __future__ import annotations

import argparse

from hugginggraph.cli.flags import Commands, command_settings, configuration_flags


def _eval(args: argparse.Namespace) -> int:
    from hugginggraph.chat_models import chat_model
    from hugginggraph.taskbench.eval_command import run_command

    settings = command_settings(args)
    spec = settings.stage_models().get("plan", settings.model)
    return run_command(args, chat_model(spec, settings), spec)


def add_eval(commands: Commands) -> None:
    from hugginggraph.taskbench.eval_command import add_arguments

    evaluation = commands.add_parser("eval", help="measure planning on TaskBench-format records, running nothing")
    add_arguments(evaluation)
    configuration_flags(evaluation)
    evaluation.set_defaults(run=_eval)


def _train_step_chooser(args: argparse.Namespace) -> int:
    from hugginggraph.taskbench.step_chooser_training import run_command

    return run_command(args)


def add_train_step_chooser(commands: Commands) -> None:
    from hugginggraph.taskbench.step_chooser_training import add_arguments

    training = commands.add_parser(
        "train-step-chooser", help="train the planner's step chooser on TaskBench's tune part and the demo bank"
    )
    add_arguments(training)
    training.set_defaults(run=_train_step_chooser)

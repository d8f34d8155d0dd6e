"""The deployable image (deploy/, docs/deploy.md): the Dockerfile is what `langgraph dockerfile` writes from
langgraph.json, its install lines install the package with the extras the server needs, and the compose file sets
only variables that HuggingGraph or the LangGraph server read. There is no Docker here: the image's install lines run
in a fresh virtual environment instead, on a copy of the build context that the image's ignore file lets through."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import time
from fnmatch import fnmatch
from importlib.metadata import requires, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from packaging.requirements import Requirement

from hugginggraph.paths import default_data_dir
from hugginggraph.settings import DEFAULT_MODEL, ConfigurationError, environment_variables, load_settings
from hugginggraph.tools.llama_cpp.gguf_weights import CONTROLLER_WEIGHTS

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
IGNORE_FILE = REPO / ".dockerignore"
COMPOSE = DEPLOY / "compose.yaml"
ENV_EXAMPLE = DEPLOY / ".env.example"

CHECKOUT = "hugginggraph"
"""The folder `langgraph dockerfile` reads langgraph.json from names the package's folder in the image
(`/deps/<name>`): the Dockerfile is generated from a folder of this name, whatever the checkout is called."""
IMAGE = "hugginggraph"
"""The image the compose file builds and runs."""
SERVER_EXTRAS = {"experts", "tts", "local", "postgres"}
"""What the server needs beyond the package: the offline experts and their text-to-speech, the embedded controller,
and PostgreSQL for runs saved where the CLI can see them."""
PYTORCH_CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
"""Keeps CUDA's gigabytes out of a CPU image; this machine reaches PyPI only, and its pip finds the CPU wheel."""

slow = pytest.mark.slow


def generated_dockerfile(folder: Path) -> str:
    """What the installed `langgraph dockerfile` writes for langgraph.json."""
    checkout = folder / CHECKOUT
    checkout.mkdir()
    for name in ("langgraph.json", "pyproject.toml"):
        shutil.copy(REPO / name, checkout / name)
    out = folder / "Dockerfile"
    command = [sys.executable, "-m", "langgraph_cli", "dockerfile", "-c", str(checkout / "langgraph.json"), str(out)]
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    subprocess.run(command, check=True, capture_output=True, text=True, env=env, timeout=120)
    return out.read_text()


def instructions(dockerfile: str, keyword: str) -> list[str]:
    """The arguments of every `keyword` instruction (RUN, ENV), continuation lines joined."""
    text = re.sub(r"\\\n", " ", dockerfile)
    return [line.split(None, 1)[1] for line in text.splitlines() if line.split(None, 1)[:1] == [keyword]]


def image_environment(dockerfile: str) -> dict[str, str]:
    return dict(argument.split("=", 1) for argument in instructions(dockerfile, "ENV"))


def copy_build_context(destination: Path) -> None:
    """The checkout as `docker build -f deploy/Dockerfile .` sends it, less what the image's ignore file names."""
    patterns = [line.strip() for line in IGNORE_FILE.read_text().splitlines() if line.strip()[:1] not in ("", "#")]
    assert not [p for p in patterns if p.startswith("!")], "this copy does not follow the ignore file's exceptions"

    def ignored(relative: str) -> bool:
        name = relative.rsplit("/", 1)[-1]
        return any(fnmatch(name, p[3:]) if p.startswith("**/") else fnmatch(relative, p) for p in patterns)

    def ignore(folder: str, names: list[str]) -> set[str]:
        base = Path(folder).relative_to(REPO).as_posix()
        return {name for name in names if ignored(name if base == "." else f"{base}/{name}")}

    shutil.copytree(REPO, destination, ignore=ignore)


def server_constraints() -> str:
    """The image pins the server's own dependencies (`/api/constraints.txt`); here, at the versions this environment
    runs langgraph-api with."""
    pins = []
    for text in requires("langgraph-api") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            pins.append(f"{requirement.name}=={version(requirement.name)}")
    return "\n".join(pins) + "\n"


UNMET_REQUIREMENTS = """
import sys
from importlib.metadata import PackageNotFoundError, requires, version
from packaging.requirements import Requirement

def unmet(name, extras):
    for text in requires(name) or []:
        requirement = Requirement(text)
        if requirement.marker and not any(requirement.marker.evaluate({"extra": e}) for e in ("", *extras)):
            continue
        if requirement.name == name:
            yield from unmet(name, requirement.extras)
            continue
        try:
            found = version(requirement.name)
        except PackageNotFoundError:
            found = None
        if found is None or not requirement.specifier.contains(found, prereleases=True):
            yield f"{text} (installed: {found})"

print("; ".join(unmet("hugginggraph", sys.argv[1:])))
"""
"""Prints each requirement of the package and the given extras that the environment does not meet."""


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def image_services(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: service for name, service in spec["services"].items() if service.get("image") == IMAGE}


def interpolated(value: str) -> str:
    """`value` as compose reads it with none of its variables set: `${NAME:-default}` is the default."""
    value = re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda match: match.group(1) or "", value)
    return value.replace("$$", "$")


def langgraph_api_variables() -> set[str]:
    """The environment variables langgraph_api's configuration reads (`env("NAME", ...)`, `getenv("NAME")`,
    `environ.get("NAME")`, `environ["NAME"]`), from its source, without running it."""
    spec = find_spec("langgraph_api")
    assert spec is not None and spec.submodule_search_locations, "langgraph-api is not installed"
    source = Path(spec.submodule_search_locations[0]) / "config" / "__init__.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Call) and node.args and isinstance(first := node.args[0], ast.Constant):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            on_environ = isinstance(func, ast.Attribute) and ast.unparse(func.value).endswith("environ")
            if called in ("env", "getenv") or (called == "get" and on_environ):
                names.add(str(first.value))
        elif (
            isinstance(node, ast.Subscript)
            and ast.unparse(node.value).endswith("environ")
            and isinstance(node.slice, ast.Constant)
        ):
            names.add(str(node.slice.value))
    return names


def env_example() -> list[tuple[str, str]]:
    """Each `NAME=value` of deploy/.env.example, the commented-out examples too, quotes taken off as compose does."""
    pairs = []
    for line in ENV_EXAMPLE.read_text().splitlines():
        if match := re.fullmatch(r"#?\s*([A-Z][A-Z0-9_]*)=(.*)", line.strip()):
            name, value = match.groups()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            pairs.append((name, value))
    return pairs


@slow
def test_the_dockerfile_is_the_one_langgraph_writes(tmp_path: Path) -> None:
    generated = generated_dockerfile(tmp_path)
    regenerate = (
        f"mkdir -p /tmp/{CHECKOUT} && cp langgraph.json pyproject.toml /tmp/{CHECKOUT}/ && "
        f"langgraph dockerfile -c /tmp/{CHECKOUT}/langgraph.json deploy/Dockerfile"
    )
    assert DOCKERFILE.read_text() == generated, f"deploy/Dockerfile is not what langgraph.json makes: {regenerate}"
    assert f"ADD . /deps/{CHECKOUT}" in generated


@slow
@pytest.mark.timeout(1800)  # llama-cpp-python compiles from source (.ci/run) where pip's cache lacks its wheel
def test_the_image_install_lines_install_the_server(tmp_path: Path) -> None:
    dockerfile = DOCKERFILE.read_text()
    runs = instructions(dockerfile, "RUN")
    installs = [run for run in runs if "pip install" in run and "-e /api" not in run]
    assert len(installs) == 2, f"expected the extras' install and the generated install of the package: {installs}"
    extras_install, package_install = installs
    named = re.search(r"/tmp/hugginggraph\[([\w,]+)\]", extras_install)
    assert named and set(named[1].split(",")) >= SERVER_EXTRAS, extras_install
    assert PYTORCH_CPU_INDEX in extras_install
    assert "-e ." in package_install
    assert any(run.endswith("hugginggraph models install-offline") for run in runs), "the weights are not baked in"

    context = tmp_path / "deps" / CHECKOUT  # `ADD . /deps/hugginggraph`, and the extras' bind mount
    copy_build_context(context)
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(server_constraints())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)

    started = time.monotonic()
    for run in installs:
        command = re.sub(r"--mount=\S+\s+", "", run).replace(PYTORCH_CPU_INDEX, "")
        for image_path, here in {
            "/tmp/hugginggraph": context,
            "/deps/*": f"{tmp_path / 'deps'}/*",
            "/api/constraints.txt": constraints,
        }.items():
            command = command.replace(image_path, str(here))
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    print(f"the image's install lines took {time.monotonic() - started:.0f} s in a fresh venv")

    def in_venv(*args: str) -> str:
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    python = str(venv / "bin" / "python")
    assert in_venv(python, "-c", "import hugginggraph; print(hugginggraph.__file__)").startswith(str(context))
    assert "install-offline" in in_venv(str(venv / "bin" / "hugginggraph"), "models", "--help")
    assert in_venv(python, "-c", UNMET_REQUIREMENTS, *sorted(SERVER_EXTRAS)).strip() == ""
    in_venv(python, "-m", "pip", "check")
    in_venv(python, "-c", "import llama_cpp.server.app")  # the compose file's controller service


def test_the_compose_file_runs_the_server_on_its_postgres_and_redis() -> None:
    spec = compose()
    services = spec["services"]
    assert {"api", "worker", "postgres", "redis"} <= services.keys()
    api_env = services["api"]["environment"]
    database = urlsplit(interpolated(api_env["DATABASE_URI"]))
    postgres = {name: interpolated(value) for name, value in services["postgres"]["environment"].items()}
    assert database.scheme in ("postgres", "postgresql") and database.hostname == "postgres"
    assert (database.username, database.password) == (postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"])
    assert database.path == f"/{postgres['POSTGRES_DB']}" and (database.port or 5432) == 5432
    redis = urlsplit(interpolated(api_env["REDIS_URI"]))
    assert redis.scheme == "redis" and redis.hostname == "redis" and (redis.port or 6379) == 6379

    worker = services["worker"]
    for name in ("DATABASE_URI", "REDIS_URI"):
        assert worker["environment"][name] == api_env[name], f"the workers' {name} is not the API's"
    python, flag, module = worker["entrypoint"]
    assert (python, flag) == ("python", "-m") and "__main__" in Path(find_spec(module).origin).read_text()
    assert api_env["N_JOBS_PER_WORKER"] == "0", "the API would run graphs beside the workers"
    assert int(interpolated(str(worker["environment"]["N_JOBS_PER_WORKER"]))) > 0
    assert int(interpolated(str(worker["deploy"]["replicas"]))) > 0

    home = image_environment(DOCKERFILE.read_text())["HUGGINGGRAPH_HOME"]
    for name, service in image_services(spec).items():
        assert (COMPOSE.parent / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == DOCKERFILE
        volumes = [volume.split(":") for volume in service["volumes"]]
        assert any(target == home and source in spec["volumes"] for source, target in volumes), name


def test_the_compose_file_sets_only_variables_the_code_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = environment_variables()
    server = langgraph_api_variables()
    assert {"DATABASE_URI", "REDIS_URI", "N_JOBS_PER_WORKER"} <= server, "langgraph_api's configuration moved"
    unread = {
        f"{service}: {name}"
        for service, spec in image_services(compose()).items()
        for name in spec.get("environment", {})
        if name not in (ours if name.startswith(("HUGGINGGRAPH_", "OPENAI_")) else server)
    }
    assert not unread, f"set by deploy/compose.yaml, read by nothing: {sorted(unread)}"

    home = image_environment(DOCKERFILE.read_text())["HUGGINGGRAPH_HOME"]
    monkeypatch.setenv("HUGGINGGRAPH_HOME", home)
    assert default_data_dir() == Path(home)


def test_the_env_example_sets_what_compose_passes_on_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = COMPOSE.read_text()
    passed_on = {name for spec in image_services(compose()).values() for name in spec.get("environment", {})}
    ours = environment_variables()
    for name in [name for name in os.environ if name.startswith(("HUGGINGGRAPH_", "OPENAI_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "absent.toml"))
    for name, value in env_example():
        assert name in passed_on or "${" + name in text, f"deploy/.env.example sets {name}, which compose ignores"
        if not name.startswith(("HUGGINGGRAPH_", "OPENAI_")) or not value:
            continue
        assert name in ours, f"{name} is no setting"
        with monkeypatch.context() as env:
            env.setenv(name, value)
            try:
                load_settings()
            except ConfigurationError as error:
                pytest.fail(f"deploy/.env.example: {name}={value}: {error}")


@slow
def test_the_controller_service_serves_the_baked_weights() -> None:
    controller = compose()["services"]["controller"]
    command = interpolated(" ".join(controller["command"]))
    alias = re.search(r"--model_alias (\S+)", command)
    finds_weights = re.search(r'--model "\$\((python -c \'.*\')\)"', command)
    assert alias and finds_weights, command
    baked = DEFAULT_MODEL.partition(":")[2]  # what `hugginggraph models install-offline` installs unasked
    assert alias[1] == baked and baked in CONTROLLER_WEIGHTS and f'gguf_path("{baked}")' in finds_weights[1]
    assert ("HUGGINGGRAPH_MODEL", f"openai:{baked}") in env_example()

    snippet = finds_weights[1].removeprefix("python -c '").removesuffix("'")
    done = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    gguf = Path(done.stdout.strip())
    assert gguf.suffix == ".gguf" and gguf.is_file()

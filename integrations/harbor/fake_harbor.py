"""A stand-in for the parts of Harbor the adapter uses, for its tests.

Harbor cannot be installed here (no PyPI), so install() puts a small
``harbor`` package tree into sys.modules before the adapter is imported.
Names, signatures and behaviour follow Harbor's source at
harbor-framework/harbor commit 39b85872597ea710077d8c93095059bca3ca4ed2
(pyproject version 0.22.0; read in the fork wrongbutworks/harbor, whose
history holds that commit). The code was read, not copied; only the error
patterns are copied, as data:

- harbor.agents.base.BaseAgent: __init__(logs_dir, model_name, logger,
  mcp_servers, skills_dir, *args, extra_env, load_trajectory,
  environment_logs_dir, **kwargs) (unknown kwargs are swallowed;
  environment_logs_dir defaults to EnvironmentPaths.agent_dir), _get_env
  (extra_env before os.environ), model_connection, populate_context_post_run.
- harbor.agents.installed.base: BaseInstalledAgent with install() abstract,
  setup() (mkdir /installed-agent, install, then the version command unless
  the version is known), ensure_system_dependencies(environment, names)
  (nothing when every command of the named packages is there, else the
  packages through apt-get/dnf/yum/apk as root; a warning and nothing when
  there is no package manager), exec_as_root / exec_as_agent -> _exec,
  which runs "set -o pipefail; CMD" and on a non-zero exit raises the error
  _classify_exec_error gives. with_prompt_template.
- ERROR_PATTERNS and the classification: the data (each pattern, its
  class, their order) is copied from src/harbor/agents/installed/base.py of
  that commit, BaseInstalledAgent.ERROR_PATTERNS, all of them: the search
  is case-insensitive over stdout + "\n" + stderr, the match ending
  furthest toward the end wins (an earlier pattern keeps a tie), none is
  NonZeroAgentExitCodeError, and AgentSafetyRefusalError's pattern is
  skipped when the output has "model_refusal_fallback" without
  "model_refusal_no_fallback".
- harbor.agents.model_connection: ModelConnectionSpec, ResolvedModelConnection
  and resolve_model_connection for the providers the tests use: the provider
  from the model name's prefix, the key from the provider's variables, the
  base URL from its variables, else its default when a key was found.
- harbor.environments.base: BaseEnvironment (exec, upload_file,
  default_user), ExecResult.
- harbor.models.agent.context.AgentContext (a pydantic model in Harbor:
  here a plain class with the same fields and is_empty()).
- harbor.models.trial.paths.EnvironmentPaths (agent_dir /logs/agent).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping

HARBOR_COMMIT = "39b85872597ea710077d8c93095059bca3ca4ed2"


# -- harbor.models.agent.context ------------------------------------------


class AgentContext:
    FIELDS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "rollout_details", "metadata")

    def __init__(self, **kw: Any) -> None:
        for name in self.FIELDS:
            setattr(self, name, kw.get(name))

    def is_empty(self) -> bool:
        return all(getattr(self, n) is None for n in self.FIELDS)


# -- harbor.models.trial.paths --------------------------------------------


@dataclass(frozen=True)
class EnvironmentPaths:
    logs_dir: PurePosixPath = PurePosixPath("/logs")
    agent_dir: PurePosixPath = PurePosixPath("/logs/agent")
    verifier_dir: PurePosixPath = PurePosixPath("/logs/verifier")


# -- harbor.environments.base -----------------------------------------------


@dataclass
class ExecResult:
    return_code: int
    stdout: str | None = None
    stderr: str | None = None


class BaseEnvironment:
    default_user: str | int | None = None

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        raise NotImplementedError

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        raise NotImplementedError


# -- harbor.agents.model_connection -------------------------------------------


@dataclass(frozen=True)
class ProviderAccess:
    api_key_envs: tuple[str, ...]
    base_url: str | None = None
    base_url_envs: tuple[str, ...] = ()


PROVIDERS = {
    "openai": ProviderAccess(("OPENAI_API_KEY",), "https://api.openai.com/v1", ("OPENAI_BASE_URL", "OPENAI_API_BASE")),
    "anthropic": ProviderAccess(("ANTHROPIC_API_KEY",), "https://api.anthropic.com/v1", ("ANTHROPIC_BASE_URL",)),
    "openrouter": ProviderAccess(("OPENROUTER_API_KEY",), "https://openrouter.ai/api/v1", ("OPENROUTER_BASE_URL",)),
    "deepseek": ProviderAccess(("DEEPSEEK_API_KEY",), "https://api.deepseek.com", ("DEEPSEEK_BASE_URL",)),
}
ALIASES = {"litellm_proxy": "openai"}


@dataclass(frozen=True)
class ModelConnectionSpec:
    default_provider: str | None = None
    api_key_envs: tuple[str, ...] = ()
    base_url_envs: tuple[str, ...] = ()
    passthrough: bool = False


@dataclass(frozen=True)
class ResolvedModelConnection:
    provider: str | None = None
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    configured_base_url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)


def resolve_model_connection(model_name: str | None, spec: ModelConnectionSpec,
                             resolve_env: Callable[..., tuple[str, str] | None]) -> ResolvedModelConnection:
    provider = spec.default_provider
    if provider is None and model_name and "/" in model_name:
        provider = model_name.split("/", 1)[0]
    provider = ALIASES.get(provider or "", provider)
    access = PROVIDERS.get(provider or "")
    url_envs = access.base_url_envs if access else ((f"{provider.upper().replace('-', '_')}_BASE_URL",) if provider else ())
    key_envs = (*spec.api_key_envs, *(access.api_key_envs if access else ()))
    key = resolve_env(*key_envs) if key_envs else None
    url = resolve_env(*spec.base_url_envs, *url_envs) if (spec.base_url_envs or url_envs) else None
    configured = (url[1] or None) if url else None
    api_key = key[1] if key else None
    return ResolvedModelConnection(
        provider=provider,
        api_key=api_key,
        base_url=configured or (access.base_url if access and api_key else None),
        configured_base_url=configured,
    )


# -- harbor.agents.base --------------------------------------------------------


class BaseAgent:
    SUPPORTS_ATIF = False
    MODEL_CONNECTION: ModelConnectionSpec | None = None

    def __init__(self, logs_dir: Path, model_name: str | None = None, logger: logging.Logger | None = None,
                 mcp_servers: list | None = None, skills_dir: str | None = None, *args: Any,
                 extra_env: dict[str, str] | None = None, load_trajectory: str | Path | None = None,
                 environment_logs_dir: PurePosixPath | None = None, **kwargs: Any) -> None:
        self.logs_dir = logs_dir
        self.environment_logs_dir = environment_logs_dir or EnvironmentPaths.agent_dir
        self.model_name = model_name
        self.logger = (logger or logging.getLogger("harbor")).getChild(__name__)
        self.mcp_servers = mcp_servers or []
        self.skills_dir = skills_dir
        self._extra_env = dict(extra_env) if extra_env else {}

    def _env_sources(self) -> tuple[Mapping[str, str], ...]:
        return (self._extra_env, os.environ)

    def _resolve_env(self, key: str, *alternatives: str) -> tuple[str, str] | None:
        for source in self._env_sources():
            for name in (key, *alternatives):
                if name in source:
                    return name, source[name]
        return None

    def _get_env(self, key: str, *alternatives: str) -> str | None:
        found = self._resolve_env(key, *alternatives)
        return found[1] if found else None

    @property
    def model_connection(self) -> ResolvedModelConnection:
        if self.MODEL_CONNECTION is None:
            return ResolvedModelConnection()
        return resolve_model_connection(self.model_name, self.MODEL_CONNECTION, self._resolve_env)

    def populate_context_post_run(self, context: AgentContext) -> None:
        pass


# -- harbor.agents.installed.base ---------------------------------------------


class NonZeroAgentExitCodeError(RuntimeError):
    pass


class ApiError(NonZeroAgentExitCodeError):
    pass


class ApiRateLimitError(ApiError):
    pass


class ApiUsageLimitError(ApiError):
    pass


class ApiInternalServerError(ApiError):
    pass


class ApiOverloadedError(ApiError):
    pass


class ApiConnectionClosedError(ApiError):
    pass


class ApiResponseStalledError(ApiError):
    pass


class OutputTokenExceededError(ApiError):
    pass


class ContextWindowExceededError(ApiError):
    pass


class UnknownApiError(ApiError):
    pass


class ApiProviderResourceNotFoundError(ApiError):
    pass


class AgentSafetyRefusalError(ApiError):
    pass


class AgentAuthenticationError(NonZeroAgentExitCodeError):
    pass


class ModelNotFoundError(NonZeroAgentExitCodeError):
    pass


class NetworkConnectionError(NonZeroAgentExitCodeError):
    pass


@dataclass
class ErrorPattern:
    pattern: str
    exception: type


# Harbor's own data: BaseInstalledAgent.ERROR_PATTERNS of
# src/harbor/agents/installed/base.py, harbor-framework/harbor commit
# 39b85872597ea710077d8c93095059bca3ca4ed2 (pyproject version 0.22.0),
# every pattern and class in Harbor's order. The tests classify with this
# list, so it must stay whole: a shortened copy let a class go untested.
ERROR_PATTERNS_SOURCE = ("harbor-framework/harbor", HARBOR_COMMIT, "0.22.0", "src/harbor/agents/installed/base.py")
ERROR_PATTERNS = [
    ErrorPattern(r"rate.?limit", ApiRateLimitError),
    ErrorPattern(r"too many requests", ApiRateLimitError),
    ErrorPattern(r"specified API usage limits", ApiUsageLimitError),
    ErrorPattern(r"You've hit your usage limit", ApiUsageLimitError),
    ErrorPattern(r"You have an unpaid invoice", ApiUsageLimitError),
    ErrorPattern(r"Quota exceeded.", ApiUsageLimitError),
    ErrorPattern(r"API Error: 500 Internal server error", ApiInternalServerError),
    ErrorPattern(r"RetriableError: \[internal\] Error", ApiInternalServerError),
    ErrorPattern(r"API Error: Overloaded", ApiOverloadedError),
    ErrorPattern(r"ServiceUnavailableError", ApiOverloadedError),
    ErrorPattern(r"Selected model is at capacity\. Please try a different model\.", ApiOverloadedError),
    ErrorPattern(r"API Error: Connection closed mid-response", ApiConnectionClosedError),
    ErrorPattern(r"API Error: stream closed before completion", ApiConnectionClosedError),
    ErrorPattern(r"API Error: Response stalled mid-stream", ApiResponseStalledError),
    ErrorPattern(r"response exceeded .+ output token maximum", OutputTokenExceededError),
    ErrorPattern(
        r"input token count exceeds the maximum number of tokens|prompt is too long: \d+ tokens > \d+ maximum",
        ContextWindowExceededError,
    ),
    ErrorPattern(r"Not logged in", AgentAuthenticationError),
    ErrorPattern(r"Cannot use this model", ModelNotFoundError),
    ErrorPattern(
        r"Provider Error We.re having trouble finding the resource you requested",
        ApiProviderResourceNotFoundError,
    ),
    ErrorPattern(
        r"safety measures that flagged|Cyber Verification Program|"
        r"flagged for possible cybersecurity risk|"
        r"Trusted Access for Cyber|chatgpt\.com/cyber|"
        r"Output blocked by content filtering policy|"
        r"violate our Usage Policy|"
        r"triggered cyber-related safeguards|"
        r"model_refusal_no_fallback|"
        r"ContentFilterError|blocked by the provider.s content filter|"
        r'"reason"\s*:\s*"content-filter"',
        AgentSafetyRefusalError,
    ),
    ErrorPattern(r"API Error", UnknownApiError),
    ErrorPattern(r"SSL_ERROR_SYSCALL", NetworkConnectionError),
    ErrorPattern(r"SSL_connect", NetworkConnectionError),
    ErrorPattern(r"Could not resolve host", NetworkConnectionError),
    ErrorPattern(r"Connection refused", NetworkConnectionError),
    ErrorPattern(r"Connection timed out", NetworkConnectionError),
    ErrorPattern(r"Request timed out", NetworkConnectionError),
    ErrorPattern(r"curl: \(\d+\)", NetworkConnectionError),
]


def classify(output: str, patterns: list[ErrorPattern] | None = None) -> type:
    """The exception class Harbor's classification gives this output."""
    soft_refusal = "model_refusal_fallback" in output and "model_refusal_no_fallback" not in output
    last: tuple[int, type] | None = None
    for p in ERROR_PATTERNS if patterns is None else patterns:
        if soft_refusal and p.exception is AgentSafetyRefusalError:
            continue
        for m in re.finditer(p.pattern, output, re.IGNORECASE):
            if last is None or m.end() > last[0]:
                last = (m.end(), p.exception)
    return last[1] if last else NonZeroAgentExitCodeError


@dataclass(frozen=True)
class PackageSpec:
    commands: tuple[str, ...]
    packages: dict[str, tuple[str, ...]]
    always_install: bool = False


def _standard(name: str) -> PackageSpec:
    return PackageSpec((name,), {m: (name,) for m in ("apt-get", "dnf", "yum", "apk")})


def with_prompt_template(fn: Any) -> Any:
    @functools.wraps(fn)
    async def wrapper(self: Any, instruction: str, *args: Any, **kwargs: Any) -> None:
        return await fn(self, self.render_instruction(instruction), *args, **kwargs)

    return wrapper


class BaseInstalledAgent(BaseAgent):
    ERROR_PATTERNS = ERROR_PATTERNS
    # The packages the adapter may ask for (Harbor's table has more).
    SYSTEM_PACKAGES = {
        "curl": _standard("curl"),
        "wget": _standard("wget"),
        "ca_certificates": PackageSpec((), {m: ("ca-certificates",) for m in ("apt-get", "dnf", "yum", "apk")},
                                       always_install=True),
    }

    def __init__(self, logs_dir: Path, prompt_template_path: Path | str | None = None, version: str | None = None,
                 extra_env: dict[str, str] | None = None, *args: Any, config: Any = None, **kwargs: Any) -> None:
        super().__init__(logs_dir, *args, extra_env=extra_env, **kwargs)
        self._prompt_template_path = Path(prompt_template_path) if prompt_template_path else None
        self._version = version

    def version(self) -> str | None:
        return self._version

    def get_version_command(self) -> str | None:
        return None

    def parse_version(self, stdout: str) -> str:
        return stdout.strip()

    def render_instruction(self, instruction: str) -> str:
        if self._prompt_template_path:
            return self._prompt_template_path.read_text().replace("{{ instruction }}", instruction)
        return instruction

    async def _exec(self, environment: BaseEnvironment, command: str, user: str | int | None = None,
                    env: dict[str, str] | None = None, cwd: str | None = None,
                    timeout_sec: int | None = None) -> ExecResult:
        result = await environment.exec(command=f"set -o pipefail; {command}", user=user, env=env, cwd=cwd,
                                        timeout_sec=timeout_sec)
        if result.return_code != 0:
            detail = (f"Command failed (exit {result.return_code}): {command}\n"
                      f"stdout: {result.stdout}\nstderr: {result.stderr}")
            raise classify(f"{result.stdout or ''}\n{result.stderr or ''}", self.ERROR_PATTERNS)(detail)
        return result

    async def ensure_system_dependencies(self, environment: BaseEnvironment, dependencies: tuple[str, ...]) -> None:
        if not dependencies:
            return
        unknown = set(dependencies) - self.SYSTEM_PACKAGES.keys()
        if unknown:
            raise ValueError(f"Unknown system dependencies: {', '.join(sorted(unknown))}")
        specs = [self.SYSTEM_PACKAGES[d] for d in dependencies]
        if not any(s.always_install for s in specs):
            commands = list(dict.fromkeys(c for s in specs for c in s.commands))
            check = " && ".join(f"command -v {c} >/dev/null 2>&1" for c in commands)
            if (await environment.exec(command=check, user="root")).return_code == 0:
                return
        found = await environment.exec(
            command='for m in apt-get dnf yum apk; do if command -v "$m" >/dev/null 2>&1; then printf "%s" "$m"; break; fi; done',
            user="root")
        manager = (found.stdout or "").strip() or None
        if manager is None:
            self.logger.warning("No supported package manager found; cannot ensure system dependencies: %s",
                                ", ".join(dependencies))
            return
        packages = " ".join(dict.fromkeys(p for s in specs for p in s.packages[manager]))
        command = {"apt-get": f"apt-get update && apt-get install -y {packages}", "dnf": f"dnf install -y {packages}",
                   "yum": f"yum install -y {packages}", "apk": f"apk add --no-cache {packages}"}[manager]
        await self.exec_as_root(environment, command=command,
                                env={"DEBIAN_FRONTEND": "noninteractive"} if manager == "apt-get" else None)

    async def exec_as_root(self, environment: BaseEnvironment, command: str, env: dict[str, str] | None = None,
                           cwd: str | None = None, timeout_sec: int | None = None) -> ExecResult:
        return await self._exec(environment, command, user="root", env=env, cwd=cwd, timeout_sec=timeout_sec)

    async def exec_as_agent(self, environment: BaseEnvironment, command: str, env: dict[str, str] | None = None,
                            cwd: str | None = None, timeout_sec: int | None = None) -> ExecResult:
        return await self._exec(environment, command, env=env, cwd=cwd, timeout_sec=timeout_sec)

    async def install(self, environment: BaseEnvironment) -> None:
        raise NotImplementedError

    async def setup(self, environment: BaseEnvironment) -> None:
        await environment.exec(command="[ -d /installed-agent ] || mkdir -p /installed-agent", user="root")
        try:
            await self.install(environment)
        except RuntimeError:
            raise
        except Exception as exc:
            raise RuntimeError(f"Agent install failed: {exc}") from exc
        if self._version is None:
            cmd = self.get_version_command()
            if cmd:
                try:
                    result = await environment.exec(command=cmd)
                    if result.return_code == 0 and result.stdout:
                        self._version = self.parse_version(result.stdout)
                except Exception:  # best effort, as Harbor's
                    pass


# -- installing the tree -----------------------------------------------------------


def install() -> None:
    """Puts the fake harbor package tree into sys.modules (once)."""
    if getattr(sys.modules.get("harbor"), "FAKE", False):
        return
    tree = {
        "harbor": {"FAKE": True},
        "harbor.agents": {},
        "harbor.agents.base": {"BaseAgent": BaseAgent},
        "harbor.agents.model_connection": {
            "ModelConnectionSpec": ModelConnectionSpec,
            "ResolvedModelConnection": ResolvedModelConnection,
            "resolve_model_connection": resolve_model_connection,
            "PROVIDERS": PROVIDERS,
        },
        "harbor.agents.installed": {},
        "harbor.agents.installed.base": {
            name: obj for name, obj in globals().items()
            if isinstance(obj, type) and (issubclass(obj, (NonZeroAgentExitCodeError, BaseInstalledAgent))
                                          or obj in (ErrorPattern, PackageSpec))
        } | {"with_prompt_template": with_prompt_template, "ERROR_PATTERNS": ERROR_PATTERNS},
        "harbor.environments": {},
        "harbor.environments.base": {"BaseEnvironment": BaseEnvironment, "ExecResult": ExecResult},
        "harbor.models": {},
        "harbor.models.agent": {},
        "harbor.models.agent.context": {"AgentContext": AgentContext},
        "harbor.models.trial": {},
        "harbor.models.trial.paths": {"EnvironmentPaths": EnvironmentPaths},
    }
    for name, attrs in tree.items():
        mod = types.ModuleType(name)
        mod.__path__ = []  # a package, so submodules import
        for k, v in attrs.items():
            setattr(mod, k, v)
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, mod)

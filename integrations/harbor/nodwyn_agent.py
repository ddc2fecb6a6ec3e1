"""nodwyn as an installed agent of Harbor.

    harbor run -d terminal-bench@2.0 -m openai/gpt-5 \\
        --agent integrations.harbor.nodwyn_agent:Nodwyn \\
        --ak binary=bin/nodwyn --ak timeout=55m

Written against Harbor's BaseInstalledAgent as of harbor-framework/harbor
commit 39b85872597ea710077d8c93095059bca3ca4ed2 (v0.22.0): install(),
run() under with_prompt_template, exec_as_root / exec_as_agent,
populate_context_post_run(). docs/harbor.md says what it does and how it
was tried.

In the task's container it

- installs the static binary at /usr/local/bin/nodwyn: copied from the
  host (kwarg ``binary`` or NODWYN_BINARY) or downloaded (``url`` or
  NODWYN_URL) with curl or wget;
- hands the provider's key to nodwyn in a file, never in an environment
  or on a command line: credentials.toml (mode 0600) in nodwyn's
  configuration directory, which the kernel floor denies to every command
  of the run, uploaded like the instruction and removed as soon as the
  daemon has read it (when the run has started);
- starts ``nodwyn daemon --no-keychain`` with its configuration, data and
  socket in directories of its own under /logs/agent/nodwyn;
- submits ``nodwyn run --daemon … --sandbox container --trajectory
  /logs/agent/trajectory.json --json -`` with the instruction on stdin, read
  from a file uploaded beforehand (never on any command line);
- stops the daemon (what the run started in the background keeps running:
  sandbox mode leaves it for the tests);
- on a failed run, prints nodwyn's own final error line (never the run's
  progress: tool commands and their output stay in progress.log, where
  Harbor's ERROR_PATTERNS do not look) and, last, words those patterns
  classify (rate limit, safety refusal, context window …), and exits with
  nodwyn's code;
- after the run, fills the context's tokens and cost from the trajectory.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from harbor.agents.installed.base import BaseInstalledAgent, with_prompt_template

try:
    from harbor.agents.model_connection import ModelConnectionSpec
except ImportError as exc:  # pragma: no cover
    raise ImportError(
        "nodwyn's Harbor adapter needs a Harbor with harbor.agents.model_connection and "
        "BaseInstalledAgent.ERROR_PATTERNS (it was written against v0.22.0, commit 39b85872); "
        f"this Harbor is older: {exc}"
    ) from exc
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.trial.paths import EnvironmentPaths

try:  # Harbor needs Python 3.12, which has it; the tests may run on less.
    from typing import override
except ImportError:  # pragma: no cover

    def override(fn):  # type: ignore[no-redef]
        return fn


DEFAULT_INSTALL_PATH = "/usr/local/bin/nodwyn"

# nodwyn run's exit codes (nodwyn run --help).
EXIT_MEANINGS = {
    0: "the run finished",
    1: "the run failed (a provider error, an error in Scheme) or stopped making progress",
    2: "a usage or configuration error: nothing ran",
    3: "the tool-call budget (--max-tool-calls) or the deadline (--timeout) ran out",
    130: "the run was interrupted",
}

# A Go duration as nodwyn's --timeout takes it: 55m, 1h30m, 90s.
_DURATION = re.compile(r"^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$")


def _as_bool(value: Any, name: str) -> bool:
    """A kwarg's truth: Harbor's --ak parses JSON (true), a config may give "true"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("", "0", "false", "no", "off"):
        return False
    if value is None:
        return False
    raise ValueError(f"Nodwyn: {name} must be true or false, not {value!r}")


def _abs_posix(value: str, name: str) -> str:
    path = PurePosixPath(value)
    if not path.is_absolute():
        raise ValueError(f"Nodwyn: {name} must be an absolute path in the container, not {value!r}")
    return path.as_posix()


# ---------------------------------------------------------------------------
# Provider errors in Harbor's words.
#
# Harbor classifies a failed command by searching its output, case
# insensitively, for the patterns of BaseInstalledAgent.ERROR_PATTERNS; the
# match that ends furthest toward the end of the output wins, and some
# classes are not retried (AgentSafetyRefusalError, AgentAuthenticationError,
# ModelNotFoundError, ApiUsageLimitError). nodwyn names a provider failure as
#
#   provider openai: POST https://…/chat/completions: 429 Too Many Requests after 6 attempts: {body}
#
# (internal/provider/retry.go), which says the status but not always in
# Harbor's words (a context overflow or a safety refusal is a 400 whose body
# says so). The adapter prints, as the last line of a failed run's output,
# the words below: each ends with a phrase one of Harbor's patterns
# matches, and nothing after it matches another.

_PROVIDER_ERROR = re.compile(r"provider (openai|anthropic|script)(?: \w+)?: (.*)", re.S)
_STATUS = re.compile(r"(?:^|: )(\d{3}) [A-Z]")
_CONTEXT_OVERFLOW = re.compile(
    r"context[_ ]length|context[_ ]window|maximum context|prompt is too long|"
    r"too many (?:input )?tokens|input token count exceeds|input is too long|"
    r"reduce the length of the messages|exceeds? the (?:model'?s? )?(?:maximum )?(?:context|token limit)",
    re.I,
)
_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota|quota|billing|usage limit", re.I)
# How providers say they blocked a request on safety grounds: Anthropic's
# "Output blocked by content filtering policy" and Usage Policy refusals,
# OpenAI's invalid_prompt ("flagged as potentially violating our usage
# policy") and cyber_policy, Azure's content_filter /
# ResponsibleAIPolicyViolation, a gateway's content-filter.
_SAFETY = re.compile(
    r"content[_ -]?filter|content management policy|content_policy_violation|blocked by .{0,40}polic|"
    r"ResponsibleAIPolicyViolation|usage policy|invalid_prompt|cyber_policy|Cyber Verification|"
    r"cyber-related safeguards|safety (?:system|measures|polic)|flagged (?:as|for) |model_refusal_no_fallback",
    re.I,
)
_MODEL_UNKNOWN = re.compile(
    r"model_not_found|not a valid model|no such model|unknown model|model\W.{0,80}(?:does not exist|not found)",
    re.I | re.S,
)

CONTEXT_WORDS = "context window exceeded: the input token count exceeds the maximum number of tokens the model takes"
SAFETY_WORDS = "the provider refused the request on safety grounds ({status}): blocked by the provider's content filter"
RESOURCE_WORDS = ("the provider answered {status} Not Found for the endpoint: "
                  "Provider Error We're having trouble finding the resource you requested")


def harbor_error_words(text: str | None) -> str | None:
    """The words for a provider failure named in nodwyn's text, or None.

    None when the text names no provider failure (an error in Scheme, no
    progress, the deadline): the output then says what nodwyn said and
    Harbor files it as a plain non-zero exit.
    """
    if not text:
        return None
    if re.search(r"no API key for", text):
        return "no API key for the model's provider in the agent's environment: Not logged in"
    m = _PROVIDER_ERROR.search(text)
    if m is None:
        return None
    rest = m.group(2)
    # "POST https://…/chat/completions: " before the status, when sent.
    rest = re.sub(r"^[A-Z]+ \S+: ", "", rest, count=1)
    sm = _STATUS.search(rest[:80])
    status = int(sm.group(1)) if sm else 0
    # Harbor does not count a refusal the model recovers from (Anthropic's
    # model_refusal_fallback) as a safety stop; nor does the adapter.
    soft_refusal = "model_refusal_fallback" in rest and "model_refusal_no_fallback" not in rest
    if status == 401:
        return f"the provider refused the API key ({status}): Not logged in"
    if 400 <= status < 500 and status != 429 and _SAFETY.search(rest) and not soft_refusal:
        return SAFETY_WORDS.format(status=status)
    if status == 403:
        return f"the provider refused the API key ({status}): Not logged in"
    if status == 429:
        if _QUOTA.search(rest):
            return "the provider's usage quota is spent (429): Quota exceeded."
        return "rate limit: the provider answered 429 Too Many Requests"
    if status == 413 or _CONTEXT_OVERFLOW.search(rest):
        return CONTEXT_WORDS
    if (status == 404 and re.search(r"model", rest, re.I)) or (400 <= status < 500 and _MODEL_UNKNOWN.search(rest)):
        return f"the provider answered {status} for the model: Cannot use this model"
    if status == 404:
        return RESOURCE_WORDS.format(status=status)
    if status == 500:
        return "API Error: 500 Internal server error"
    if status in (502, 503, 504, 529) or re.search(r"overloaded", rest, re.I):
        return f"the provider is unavailable ({status or 'overloaded'}): API Error: Overloaded"
    if status >= 400:
        return f"the provider answered {status}: API Error"
    low = rest.lower()
    if "idle timeout" in low:
        return "no data from the model within the idle timeout: API Error: Response stalled mid-stream"
    if "request timeout" in low:
        return "the request to the model ran past its request timeout: Request timed out"
    if "stream cut mid-reply" in low:
        return "the stream ended before the reply was complete: API Error: Connection closed mid-response"
    if "connection refused" in low:
        return "could not connect to the provider: Connection refused"
    if "no such host" in low:
        return "the provider's host name does not resolve: Could not resolve host"
    if "i/o timeout" in low or "timed out" in low:
        return "could not connect to the provider: Connection timed out"
    if "x509" in low or "tls" in low or "certificate" in low:
        return "the TLS handshake with the provider failed: SSL_connect"
    return "the model request failed: API Error"


# ---------------------------------------------------------------------------
# What the run script reports.


# grep's pattern for a --json event line of one type (its seq, time, then type).
_EVENT_RE = """'^{{"seq":[0-9]*,"time":"[^"]*","type":"{type}"'"""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class RunOutcome:
    """What the run script printed after its boundary line."""

    exit_code: int | None = None
    error: str | None = None  # the text of the run's last error event
    end: dict[str, Any] | None = None  # the data of its run.end event
    stderr: list[str] = field(default_factory=list)  # the last lines nodwyn run wrote on stderr

    @classmethod
    def parse(cls, stdout: str | None, boundary: str) -> "RunOutcome":
        out = cls()
        lines = (stdout or "").splitlines()
        try:
            start = len(lines) - 1 - lines[::-1].index(boundary)
        except ValueError:
            return out
        for line in lines[start + 1 :]:
            key, _, value = line.partition("=")
            if key == "exit":
                try:
                    out.exit_code = int(value.strip())
                except ValueError:
                    out.exit_code = None
            elif key in ("error", "end"):
                # The event itself, not a line that only mentions one (the
                # script's grep is anchored; this is the check).
                try:
                    ev = json.loads(value)
                except ValueError:
                    continue
                if not isinstance(ev, dict) or ev.get("type") != {"error": "error", "end": "run.end"}[key]:
                    continue
                data = ev.get("data") if isinstance(ev.get("data"), dict) else {}
                if key == "error":
                    out.error = data.get("text") if isinstance(data.get("text"), str) else None
                else:
                    out.end = data
            elif key == "stderr":
                out.stderr.append(_ANSI.sub("", value.rsplit("\r", 1)[-1]))
        return out

    def cause(self) -> str | None:
        """nodwyn's own final error line: why the run ended badly, in its words.

        The last error event's text; else the run.end's text when the run
        did not finish (the deadline, the budget, no progress); else, for a
        run that never started (no run.end: a configuration error, the
        daemon refused it), the error nodwyn run printed last on stderr, the
        line beginning "nodwyn: " and what follows it. Never the progress:
        a tool's output ("Connection refused", "Not logged in", "rate
        limit") would be classified by Harbor as the run's failure.
        """
        if self.error:
            return self.error
        if self.end is not None:
            if self.end.get("status") != "finished" and self.end.get("text"):
                return str(self.end["text"])
            return None
        for i in range(len(self.stderr) - 1, -1, -1):
            if self.stderr[i].startswith("nodwyn: "):
                return " ".join(line.strip() for line in self.stderr[i:]).removeprefix("nodwyn: ")
        return None


def _has_password(url: str) -> bool:
    """The URL's user info holds a password (https://user:pass@host/v1)."""
    try:
        return bool(urlsplit(url).password)
    except ValueError:
        return False


def toml_string(text: str) -> str:
    """text as a TOML basic string: quoted, with \\, " and control characters escaped."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def credentials_toml(keys: dict[str, str]) -> str:
    """nodwyn's credentials.toml holding keys ({provider: key}): [keys] openai = "…"."""
    return "[keys]\n" + "".join(f"{name} = {toml_string(key)}\n" for name, key in sorted(keys.items()))


def _clip(text: str, n: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---------------------------------------------------------------------------


class Nodwyn(BaseInstalledAgent):
    """nodwyn (this repository) as a Harbor installed agent; see docs/harbor.md.

    Kwargs (``--ak name=value``):

    - ``binary``: host path of a static nodwyn binary to copy in (or NODWYN_BINARY).
    - ``url``: where to download it from instead (or NODWYN_URL).
    - ``timeout``: nodwyn's own deadline, e.g. ``55m``: give less than the task's
      agent timeout, so the run ends cleanly (exit 3) with its log and trajectory.
    - ``max_tool_calls``, ``profile``: nodwyn run's --max-tool-calls, --profile.
    - ``api_base``: the OpenAI-compatible (or Anthropic) endpoint, over what
      Harbor's model connection gives (OPENAI_BASE_URL, a provider's default).
    - ``no_kernel_floor``: true where the container cannot have Landlock
      (daemon and run get --no-kernel-floor; docs/harbor.md says what that costs).
    - ``workdir``: the folder to work in (default: the directory Harbor's
      commands start in, the task's workdir; /app if that is /).
    - ``script``: a host path of a nodwyn model script (docs/script-provider.md)
      used instead of a model: for checking the adapter without a key.
    - ``install_path``, ``agent_dir``: where the binary goes and the
      container's path of Harbor's agent log directory (default: Harbor's
      environment_logs_dir, /logs/agent); the tests point them at a
      temporary directory.
    """

    SUPPORTS_ATIF: bool = True
    MODEL_CONNECTION = ModelConnectionSpec()

    def __init__(
        self,
        *args: Any,
        binary: str | None = None,
        url: str | None = None,
        timeout: str | None = None,
        max_tool_calls: int | str | None = None,
        profile: str | None = None,
        api_base: str | None = None,
        no_kernel_floor: bool | str = False,
        workdir: str | None = None,
        script: str | None = None,
        install_path: str = DEFAULT_INSTALL_PATH,
        agent_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._binary = str(binary) if binary else None
        self._url = str(url) if url else None
        if timeout is not None and not _DURATION.match(str(timeout)):
            raise ValueError(f"Nodwyn: timeout must be a duration like 55m or 1h30m, not {timeout!r}")
        self._timeout = str(timeout) if timeout is not None else None
        if max_tool_calls is not None:
            try:
                max_tool_calls = int(max_tool_calls)
            except (TypeError, ValueError):
                raise ValueError(f"Nodwyn: max_tool_calls must be a whole number, not {max_tool_calls!r}") from None
            if max_tool_calls <= 0:
                raise ValueError(f"Nodwyn: max_tool_calls must be above 0, not {max_tool_calls}")
        self._max_tool_calls = max_tool_calls
        self._profile = str(profile) if profile else None
        self._api_base = str(api_base) if api_base else None
        self._no_kernel_floor = _as_bool(no_kernel_floor, "no_kernel_floor")
        self._workdir = _abs_posix(str(workdir), "workdir") if workdir else None
        self._script = Path(script) if script else None
        if self._script is not None and not self._script.is_file():
            raise FileNotFoundError(f"Nodwyn: script {self._script} is not a file")
        self._install_path = _abs_posix(str(install_path), "install_path")
        # Harbor's environment-side log directory for this agent
        # (BaseAgent.environment_logs_dir: /logs/agent, or a role's own in a
        # simulated-user trial); agent_dir overrides it (the tests).
        root = agent_dir or getattr(self, "environment_logs_dir", None) or EnvironmentPaths.agent_dir
        self._agent_dir = PurePosixPath(_abs_posix(PurePosixPath(root).as_posix(), "agent_dir"))
        # What install() will need is checked now, before Harbor builds the
        # environment: a wrong path should not cost a container.
        self._binary_source = self._install_source()

    def _install_source(self) -> Path | str | None:
        """The host binary (a Path) or the URL (a str) install() will use, checked; None if neither is given."""
        binary = self._binary or self._get_env("NODWYN_BINARY")
        if binary:
            source = Path(binary).expanduser()
            if not source.is_file():
                raise FileNotFoundError(
                    f"Nodwyn: the binary {source} (binary= or NODWYN_BINARY) is not a file on this host; "
                    "build it with 'make build' (bin/nodwyn, CGO_ENABLED=0)"
                )
            return source
        url = self._url or self._get_env("NODWYN_URL")
        if url:
            if not re.match(r"^https?://", url):
                raise ValueError(f"Nodwyn: url must be an http(s) URL, not {url!r}")
            return url
        return None

    # -- identity ---------------------------------------------------------

    @staticmethod
    @override
    def name() -> str:
        return "nodwyn"

    @override
    def get_version_command(self) -> str | None:
        return f"{shlex.quote(self._install_path)} version"

    @override
    def parse_version(self, stdout: str) -> str:
        lines = stdout.strip().splitlines()
        return lines[-1].strip().removeprefix("nodwyn ").strip() if lines else ""

    # -- paths in the container -------------------------------------------

    @property
    def nodwyn_dir(self) -> str:
        """The adapter's own directory: config, data, run (socket), logs."""
        return (self._agent_dir / "nodwyn").as_posix()

    @property
    def trajectory_path(self) -> str:
        return (self._agent_dir / "trajectory.json").as_posix()

    # -- install ------------------------------------------------------------

    @override
    async def install(self, environment: BaseEnvironment) -> None:
        source = self._binary_source
        target = shlex.quote(self._install_path)
        parent = shlex.quote(PurePosixPath(self._install_path).parent.as_posix())
        if isinstance(source, Path):
            await self.exec_as_root(environment, command=f"mkdir -p {parent}")
            await environment.upload_file(source, self._install_path)
            await self.exec_as_root(environment, command=f"chmod 755 {target}")
        elif isinstance(source, str):
            # A download needs curl or wget: where the image has neither,
            # Harbor installs curl (and the CA certificates it needs for
            # https) with the image's package manager.
            have = await environment.exec(
                command="command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1", user="root")
            if have.return_code != 0 and hasattr(self, "ensure_system_dependencies"):
                await self.ensure_system_dependencies(environment, ("curl", "ca_certificates"))
            q = shlex.quote(source)
            tmp = shlex.quote(self._install_path + ".download")
            await self.exec_as_root(
                environment,
                command=(
                    f"mkdir -p {parent} || exit 1\n"
                    "if command -v curl >/dev/null 2>&1; then\n"
                    f"  curl -fsSL --retry 3 -o {tmp} {q} || {{ echo 'nodwyn: curl could not download '{q} >&2; exit 1; }}\n"
                    "elif command -v wget >/dev/null 2>&1; then\n"
                    f"  wget -q -O {tmp} {q} || {{ echo 'nodwyn: wget could not download '{q} >&2; exit 1; }}\n"
                    "else\n"
                    f"  echo 'nodwyn: neither curl nor wget is in the container to download '{q}', and the image has "
                    "no package manager Harbor could install curl with; give binary=PATH (a static build on the host) instead' >&2\n"
                    "  exit 1\n"
                    "fi\n"
                    f"chmod 755 {tmp} && mv -f {tmp} {target}"
                ),
            )
        else:
            raise ValueError(
                "Nodwyn: nothing to install: give the static binary with --ak binary=PATH "
                "(or NODWYN_BINARY; 'make build' makes bin/nodwyn) or a download with --ak url=URL (or NODWYN_URL)"
            )
        # A binary for another architecture, or one linked against a libc the
        # image lacks, fails here rather than in the run. Its output is the
        # version, so Harbor's setup need not run it again.
        result = await self.exec_as_root(
            environment,
            command=(
                f"out=$({target} version 2>&1) || {{ "
                f"echo \"nodwyn: {self._install_path} does not run in the container: $out\"; "
                "echo 'nodwyn: it must be a static build for the container'\"'\"'s architecture "
                "(CGO_ENABLED=0 GOARCH=… go build ./cmd/nodwyn, or make build on a host of that architecture)'; "
                "exit 1; }; echo \"$out\""
            ),
        )
        stdout = getattr(result, "stdout", None)
        if self._version is None and stdout:
            self._version = self.parse_version(stdout) or None

    # -- the model ----------------------------------------------------------

    def _provider_args(self, script_path: str | None) -> tuple[list[str], dict[str, str], str | None]:
        """nodwyn run's provider flags, the key to hand over ({nodwyn's provider: key}, or {}),
        and a base URL too secret for a command line (one with a password), or None."""
        if script_path is not None:
            return ["--script", script_path], {}, None
        if not self.model_name:
            raise ValueError(
                "Nodwyn: no model: give harbor run --model PROVIDER/MODEL (openai/gpt-5, anthropic/claude-sonnet-4-5, "
                "openrouter/…), or --ak script=FILE for nodwyn's scripted model"
            )
        access = self.model_connection
        if "/" in self.model_name:
            named_provider, model = self.model_name.split("/", 1)
        else:
            named_provider, model = None, self.model_name
        provider = access.provider or named_provider or "openai"
        if provider == "anthropic":
            base = self._api_base or access.configured_base_url
            args = ["--provider", "anthropic", "--model", model]
            keys = {"anthropic": access.api_key} if access.api_key else {}
        else:
            # Every other provider is spoken to as OpenAI-compatible
            # chat completions at its base URL.
            base = self._api_base or access.base_url
            if base is None and provider != "openai":
                raise ValueError(
                    f"Nodwyn: no endpoint for provider {provider!r}: nodwyn speaks OpenAI-compatible chat "
                    f"completions to it at a base URL; give --ak api_base=URL or {provider.upper().replace('-', '_')}_BASE_URL"
                )
            args = ["--provider", "openai", "--model", model]
            keys = {"openai": access.api_key} if access.api_key else {}
        private_base = None
        if base and _has_password(base):
            private_base = base  # through config.toml, as the key goes
        elif base:
            args += ["--base-url", base]
        if not keys and (provider == "anthropic" or base in (None, "https://api.openai.com/v1")):
            self.logger.warning(
                "Nodwyn: no API key found for provider %s, which its official endpoint needs", provider
            )
        return args, keys, private_base

    # -- run ------------------------------------------------------------------

    @property
    def credentials_path(self) -> str:
        """Where the key is handed to nodwyn: credentials.toml of its configuration directory."""
        return f"{self.nodwyn_dir}/config/nodwyn/credentials.toml"

    @property
    def config_path(self) -> str:
        """Where a base URL with a password is handed to nodwyn: its config.toml."""
        return f"{self.nodwyn_dir}/config/nodwyn/config.toml"

    def _prepare_command(self) -> str:
        n = shlex.quote(self.nodwyn_dir)
        return (
            f"mkdir -p {n}/config/nodwyn {n}/data {n}/run && "
            f"chmod 700 {n}/config {n}/config/nodwyn {n}/data {n}/run && "
            f"rm -f {n}/instruction.txt {n}/model.script {n}/exit_code {shlex.quote(self.credentials_path)} "
            f"{shlex.quote(self.config_path)}"
        )

    def _stop_function(self) -> str:
        """Shell functions: is a pid running, and stop the daemon of the pid file.

        A pid is running while /proc/PID/stat exists and is not a zombie's
        (the daemon is this shell's child: kill -0 would go on answering for
        its zombie). Only a process running this very binary is stopped: a pid
        left in the file by an earlier run may have been reused since (one
        whose binary was replaced by a new install since shows "(deleted)").
        """
        return (
            "nodwyn_running() {\n"
            '  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1\n'
            '  s=${s##*) }\n'
            '  case "$s" in Z*|X*|"") return 1;; esac\n'
            "}\n"
            "nodwyn_stop_daemon() {\n"
            '  [ -f "$PIDFILE" ] || return 0\n'
            '  p=$(cat "$PIDFILE" 2>/dev/null); rm -f "$PIDFILE"\n'
            '  case "$p" in ""|*[!0-9]*) return 0;; esac\n'
            '  case "$(readlink "/proc/$p/exe" 2>/dev/null)" in "$BINREAL"|"$BINREAL (deleted)") ;; *) return 0;; esac\n'
            '  kill "$p" 2>/dev/null || return 0\n'
            "  j=0\n"
            '  while nodwyn_running "$p"; do\n'
            '    j=$((j+1)); if [ "$j" -gt 100 ]; then kill -9 "$p" 2>/dev/null; break; fi\n'
            "    sleep 0.1 2>/dev/null || sleep 1\n"
            "  done\n"
            "}\n"
            # The daemon reads the key (and config.toml) as a run starts,
            # before the run's first event: the files go once run.log has
            # one, or the client has ended (the run never started).
            "nodwyn_forget_key() {\n"
            '  while { [ -f "$CRED" ] || [ -f "$CONF" ]; } && [ ! -s "$N/run.log" ] && nodwyn_running "$1"; do\n'
            "    sleep 0.1 2>/dev/null || sleep 1\n"
            "  done\n"
            '  rm -f "$CRED" "$CONF"\n'
            "}\n"
        )

    def _preamble(self) -> str:
        return (
            f"N={shlex.quote(self.nodwyn_dir)}\n"
            f"BIN={shlex.quote(self._install_path)}\n"
            'BINREAL=$(readlink -f "$BIN" 2>/dev/null || echo "$BIN")\n'
            'SOCK="$N/run/daemon.sock"\n'
            'PIDFILE="$N/run/daemon.pid"\n'
            'CRED="$N/config/nodwyn/credentials.toml"\n'
            'CONF="$N/config/nodwyn/config.toml"\n'
            'export XDG_CONFIG_HOME="$N/config" XDG_DATA_HOME="$N/data" XDG_RUNTIME_DIR="$N/run"\n'
            # The key and endpoint come from the adapter only: a variable of
            # the container's would win over its files (nodwyn reads the
            # environment after config.toml, and before credentials.toml).
            "unset NODWYN_SOCKET NODWYN_PROFILE OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL\n"
            + self._stop_function()
        )

    def stop_command(self) -> str:
        """Stops a daemon the adapter started, and removes the key's file (after a run Harbor cancelled)."""
        return self._preamble() + 'nodwyn_stop_daemon\nrm -f "$CRED" "$CONF"\n'

    def run_command(self, provider_args: list[str], boundary: str) -> str:
        """The script that starts the daemon, submits the run and stops the daemon.

        It fails (non-zero) only when nodwyn could not be started; the run's
        own exit code is reported after the boundary line, with its last
        error and run.end events and the last lines nodwyn run wrote on
        stderr (progress.log), for run() to judge. The progress itself is
        never printed here.
        """
        floor = " --no-kernel-floor" if self._no_kernel_floor else ""
        q = shlex.quote
        words = ['--daemon "$SOCK"', "--sandbox container", '-C "$WORKDIR"']
        words += [f"--trajectory {q(self.trajectory_path)}", "--json"]
        if self._timeout:
            words.append(f"--timeout {q(self._timeout)}")
        if self._max_tool_calls:
            words.append(f"--max-tool-calls {int(self._max_tool_calls)}")
        if self._profile:
            words.append(f"--profile {q(self._profile)}")
        if self._no_kernel_floor:
            words.append("--no-kernel-floor")
        words += [q(a) for a in provider_args]
        quoted = " ".join(words)
        workdir = shlex.quote(self._workdir) if self._workdir else '""'
        return (
            self._preamble()
            + f"WORKDIR={workdir}\n"
            'if [ -z "$WORKDIR" ]; then WORKDIR=$(pwd); if [ "$WORKDIR" = / ] && [ -d /app ]; then WORKDIR=/app; fi; fi\n'
            'if [ ! -x "$BIN" ]; then echo "nodwyn: $BIN is missing or not executable: did the agent\'s setup run?" >&2; exit 1; fi\n'
            'if [ ! -r "$N/instruction.txt" ]; then echo "nodwyn: no instruction in $N/instruction.txt" >&2; exit 1; fi\n'
            "trap 'nodwyn_stop_daemon; rm -f \"$CRED\" \"$CONF\"' EXIT\n"
            "nodwyn_stop_daemon\n"  # one an earlier, cancelled run left
            'rm -f "$SOCK" "$N/run.log"\n'
            f'nohup "$BIN" daemon --no-keychain --socket "$SOCK"{floor} >>"$N/daemon.log" 2>&1 </dev/null &\n'
            "DPID=$!\n"
            'echo "$DPID" >"$PIDFILE"\n'
            "i=0\n"
            'while [ ! -S "$SOCK" ]; do\n'
            '  if ! nodwyn_running "$DPID"; then\n'
            '    echo "nodwyn: the daemon exited before serving on $SOCK; the end of $N/daemon.log:" >&2\n'
            '    tail -n 20 "$N/daemon.log" >&2\n'
            '    if grep -q "kernel floor cannot be had" "$N/daemon.log"; then\n'
            "      echo 'nodwyn: this container cannot have Landlock; --ak no_kernel_floor=true runs without it (docs/harbor.md)' >&2\n"
            "    fi\n"
            "    exit 1\n"
            "  fi\n"
            "  i=$((i+1))\n"
            '  if [ "$i" -gt 100 ]; then echo "nodwyn: no socket $SOCK 10 s after starting the daemon (pid $DPID); $N/daemon.log says:" >&2; tail -n 20 "$N/daemon.log" >&2; exit 1; fi\n'
            "  sleep 0.1 2>/dev/null || sleep 1\n"
            "done\n"
            # The progress (tool commands and their output) goes to
            # progress.log only: what this command prints is what Harbor
            # would classify if it failed.
            f'"$BIN" run {quoted} - <"$N/instruction.txt" >"$N/run.log" 2>"$N/progress.log" &\n'
            "RPID=$!\n"
            'nodwyn_forget_key "$RPID"\n'
            'wait "$RPID"; echo $? >"$N/exit_code"\n'
            "nodwyn_stop_daemon\n"
            f"echo {shlex.quote(boundary)}\n"
            'echo "exit=$(cat "$N/exit_code" 2>/dev/null)"\n'
            # Events, not lines that mention one: --json writes seq, time, type first.
            f"grep {_EVENT_RE.format(type='error')} \"$N/run.log\" | tail -n 1 | sed 's/^/error=/'\n"
            f"grep {_EVENT_RE.format(type='run[.]end')} \"$N/run.log\" | tail -n 1 | sed 's/^/end=/'\n"
            "tail -n 5 \"$N/progress.log\" | sed 's/^/stderr=/'\n"
            "exit 0\n"
        )

    async def _upload_text(self, environment: BaseEnvironment, text: str, remote: str, private: bool = False) -> None:
        """Puts text in a file of the container, owned by the agent's user.

        The instruction travels this way, never on a command line: a command
        of the task that kills processes by matching their command line
        (pkill -f …) would otherwise match the agent's. So does the key
        (private: mode 0600 here and there), never in an environment: the
        environment a process was started with stays readable in
        /proc/PID/environ for as long as it runs, and the run script's shell
        runs as long as the run.
        """
        with tempfile.TemporaryDirectory(prefix="nodwyn-harbor-") as tmp:
            local = Path(tmp) / PurePosixPath(remote).name
            fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            await environment.upload_file(local, remote)
        q = shlex.quote(remote)
        mode = f" && chmod 600 {q}" if private else ""
        if environment.default_user is not None:
            await self.exec_as_root(
                environment,
                command=f"chown {shlex.quote(str(environment.default_user))} {q}{mode}",
            )
        elif private:
            await self.exec_as_agent(environment, command=f"chmod 600 {q}")

    @override
    @with_prompt_template
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        script_remote = f"{self.nodwyn_dir}/model.script" if self._script else None
        provider_args, keys, private_base = self._provider_args(script_remote)
        await self.exec_as_agent(environment, command=self._prepare_command())
        await self._upload_text(environment, instruction, f"{self.nodwyn_dir}/instruction.txt")
        if self._script is not None and script_remote is not None:
            await self._upload_text(environment, self._script.read_text(), script_remote)
        if keys:
            await self._upload_text(environment, credentials_toml(keys), self.credentials_path, private=True)
        if private_base:
            await self._upload_text(environment, f"[provider]\nbase_url = {toml_string(private_base)}\n",
                                    self.config_path, private=True)

        boundary = f"--- nodwyn-harbor {uuid.uuid4().hex} ---"
        command = self.run_command(provider_args, boundary)
        done = False
        try:
            result = await self.exec_as_agent(environment, command=command)
            done = True
        finally:
            if not done:  # cancelled (Harbor's timeout) or failed: the daemon must not outlive it
                try:
                    await self.exec_as_agent(environment, command=self.stop_command())
                except Exception as exc:  # noqa: BLE001 - best effort, the original error matters
                    self.logger.debug(f"Nodwyn: stopping the daemon after the run: {exc}")

        outcome = RunOutcome.parse(result.stdout, boundary)
        if outcome.exit_code == 0:
            return
        # Harbor classifies what this command prints: the failure's words go last.
        await self.exec_as_agent(environment, command=self.failure_command(outcome))

    def failure_command(self, outcome: RunOutcome) -> str:
        """The command that says why the run failed, and exits with nodwyn's code.

        Harbor classifies its output (ERROR_PATTERNS, the last match
        wins), so it holds nodwyn's own final error line and nothing the run
        did: no tool command, no tool output (those are in progress.log and
        run.log). Last come the words for a provider failure, which decide
        the class; without them only nodwyn's line can match.
        """
        code = outcome.exit_code if outcome.exit_code not in (None, 0) else 1
        status = (outcome.end or {}).get("status")
        calls = (outcome.end or {}).get("tool_call_count")
        head = f"nodwyn: run exited {outcome.exit_code if outcome.exit_code is not None else '(no exit code recorded)'}"
        if outcome.exit_code in EXIT_MEANINGS:
            head += f", {EXIT_MEANINGS[outcome.exit_code]}"
        if status:
            head += f" (status {status}, {calls} tool calls)"
        cause = outcome.cause()
        lines = [head, f"nodwyn: {_clip(cause)}" if cause else
                 f"nodwyn: no error line from nodwyn run; its output is in {self.nodwyn_dir}/progress.log"]
        lines.append(
            f"nodwyn: events in {self.nodwyn_dir}/run.log, progress in {self.nodwyn_dir}/progress.log, "
            f"the daemon's log in {self.nodwyn_dir}/daemon.log"
        )
        words = harbor_error_words(cause)
        if words:
            lines.append(f"nodwyn: provider error: {words}")
        text = "\n".join(lines)
        return f"printf '%s\\n' {shlex.quote(text)}; exit {int(code)}"

    # -- after the run ----------------------------------------------------------

    @override
    def populate_context_post_run(self, context: AgentContext) -> None:
        """Tokens and cost from the trajectory (else run.log's run.end).

        ATIF's final_metrics first; a total it lacks is summed from the
        steps' metrics where any step has it; None where neither says.
        """
        usage = usage_from_trajectory(self.logs_dir / "trajectory.json")
        end = last_run_end(self.logs_dir / "nodwyn" / "run.log")
        if usage is None and end is not None:
            usage = {
                "prompt": _num(end.get("input_tokens"), int),
                "completion": _num(end.get("output_tokens"), int),
                "cached": None,
                "cost": None,
            }
        if usage is not None:
            context.n_input_tokens = usage["prompt"]
            context.n_output_tokens = usage["completion"]
            context.n_cache_tokens = usage["cached"]
            context.cost_usd = usage["cost"]
        if end is not None:
            meta = dict(context.metadata or {})
            meta["nodwyn"] = {k: end.get(k) for k in ("status", "tool_call_count", "elapsed_ms") if k in end}
            context.metadata = meta


def _num(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value)


_TOTALS = (
    ("prompt", "total_prompt_tokens", "prompt_tokens", int),
    ("completion", "total_completion_tokens", "completion_tokens", int),
    ("cached", "total_cached_tokens", "cached_tokens", int),
    ("cost", "total_cost_usd", "cost_usd", float),
)


def usage_from_trajectory(path: Path) -> dict[str, Any] | None:
    """The usage totals of an ATIF trajectory file; None if it cannot be read."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    final = doc.get("final_metrics") if isinstance(doc.get("final_metrics"), dict) else {}
    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    out: dict[str, Any] = {}
    for key, total_name, step_name, kind in _TOTALS:
        value = _num(final.get(total_name), kind)
        if value is None:
            found = [
                _num(s["metrics"].get(step_name), kind)
                for s in steps
                if isinstance(s.get("metrics"), dict) and _num(s["metrics"].get(step_name), kind) is not None
            ]
            value = kind(sum(found)) if found else None
        out[key] = value
    return out


_RUN_END = re.compile(r'"type"\s*:\s*"run\.end"')


def last_run_end(path: Path) -> dict[str, Any] | None:
    """The data of the last run.end event in a --json event log."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if not _RUN_END.search(line):
            continue
        try:
            data = json.loads(line).get("data")
        except (ValueError, AttributeError):
            continue
        if isinstance(data, dict):
            return data
    return None

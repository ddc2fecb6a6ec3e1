"""Tests of the Harbor adapter (integrations/harbor/nodwyn_agent.py).

    python3 -m unittest discover -s integrations/harbor -t .    # from the repository

Harbor is not installable here: fake_harbor puts a stand-in for the parts
of it the adapter uses into sys.modules first (built from Harbor's source,
see its docstring). Two kinds of tests:

- with a recording environment: the commands the adapter would run in the
  container, the files it uploads, the environment it passes, how a failed
  run's words are classified by Harbor's patterns, the post-run usage;
- LocalRunTest: the adapter's commands run for real by bash on this machine,
  a temporary directory standing in for /logs/agent, /app and
  /usr/local/bin, with nodwyn built from this repository (skipped without
  go; NODWYN_TEST_BINARY names a binary to use instead, NODWYN_TEST_GO the
  go command): the scripted model, and a fake OpenAI-compatible server on
  127.0.0.1 for the key's way, a 429 and a context overflow.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

from integrations.harbor import fake_harbor

fake_harbor.install()

from integrations.harbor import nodwyn_agent  # noqa: E402
from integrations.harbor.nodwyn_agent import Nodwyn, RunOutcome, harbor_error_words  # noqa: E402

H = fake_harbor
logging.getLogger("harbor").addHandler(logging.NullHandler())  # the tests that want a warning ask for it
REPO = Path(__file__).resolve().parents[2]
BOUNDARY = re.compile(r"--- nodwyn-harbor [0-9a-f]{32} ---")


# ---------------------------------------------------------------------------
# A recording environment.


class Call:
    def __init__(self, command, user, env, cwd):
        self.command, self.user, self.env, self.cwd = command, user, env or {}, cwd

    def __repr__(self):
        return f"Call(user={self.user!r}, {self.command[:80]!r}…)"


class RecordingEnv(H.BaseEnvironment):
    """Records exec calls and uploads; answers run scripts with `outcome`."""

    def __init__(self, outcome="exit=0", fail_run=None, run_exc=None, tools=("curl", "wget"), manager="apt-get"):
        self.calls: list[Call] = []
        self.uploads: dict[str, str] = {}
        self.default_user = None
        self.outcome = outcome
        self.fail_run = fail_run  # an ExecResult for the run script
        self.run_exc = run_exc  # an exception the run script raises
        self.tools = set(tools)  # the commands `command -v` finds
        self.manager = manager  # the image's package manager, or None

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        self.calls.append(Call(command, user, env, cwd))
        if command.endswith(" version") or " version 2>&1)" in command:
            return H.ExecResult(return_code=0, stdout="nodwyn v1.2.3\n")
        if command.startswith("for m in apt-get dnf yum apk"):
            return H.ExecResult(return_code=0, stdout=self.manager or "")
        if "apt-get install" in command:
            self.tools |= {"curl"}
            return H.ExecResult(return_code=0, stdout="")
        if command.startswith("command -v ") and "\n" not in command:
            # "command -v A >/dev/null 2>&1 || command -v B …" / "… && …"
            found = [c in self.tools for c in re.findall(r"command -v (\S+)", command)]
            ok = all(found) if " && " in command else any(found)
            return H.ExecResult(return_code=0 if ok else 1, stdout="")
        m = BOUNDARY.search(command)
        if m:  # the run script
            if self.run_exc is not None:
                raise self.run_exc
            if self.fail_run is not None:
                return self.fail_run
            return H.ExecResult(return_code=0, stdout=f"progress lines\n{m.group(0)}\n{self.outcome}\n")
        if "printf '%s\\n'" in command:  # a failure's words: let bash say them
            p = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
            return H.ExecResult(return_code=p.returncode, stdout=p.stdout, stderr=p.stderr)
        return H.ExecResult(return_code=0, stdout="")

    async def upload_file(self, source_path, target_path):
        self.uploads[target_path] = Path(source_path).read_bytes().decode()
        self.calls.append(Call(f"UPLOAD {target_path}", None, None, None))

    def commands(self):
        return [c.command for c in self.calls]

    def run_call(self):
        runs = [c for c in self.calls if BOUNDARY.search(c.command)]
        assert len(runs) == 1, runs
        return runs[0]


def agent(tmp, **kw):
    kw.setdefault("model_name", "openai/gpt-5")
    return Nodwyn(logs_dir=Path(tmp), **kw)


def error_event(text):
    return json.dumps({"seq": 4, "type": "error", "data": {"text": text}})


def end_event(status, text="", calls=0):
    return json.dumps({"seq": 5, "type": "run.end", "data": {"status": status, "text": text, "tool_call_count": calls,
                                                            "input_tokens": 10, "output_tokens": 2}})


RATE_429 = ('runtime/loop.scm:62:19: model-turn: provider openai: POST http://127.0.0.1:18555/v1/chat/completions: '
            '429 Too Many Requests (the server asked to wait 1h0m0s, more than the 2m0s left of the retry budget): '
            '{"error": {"message": "Rate limit reached for gpt-x", "code": "rate_limit_exceeded"}}')
CONTEXT_400 = ('runtime/loop.scm:62:19: model-turn: provider openai: POST https://api.openai.com/v1/chat/completions: '
               '400 Bad Request: {"error": {"message": "This model\'s maximum context length is 8192 tokens. However, '
               'your messages resulted in 9000 tokens.", "code": "context_length_exceeded"}}')


# nodwyn's error texts as nodwyn run writes them (taken from runs of this
# repository's binary against a server on 127.0.0.1 answering each status).
LOOP = "runtime/loop.scm:63:19: model-turn: "
REAL = {
    "refused": LOOP + "provider openai: POST http://127.0.0.1:9/v1/chat/completions: connection failed: dial tcp: "
                      "connect: connection refused after 6 attempts",
    "401": LOOP + "provider openai: POST http://127.0.0.1:18771/v1/chat/completions: 401 Unauthorized after 3 attempts: "
                  '{"error": {"message": "Incorrect API key provided: k. You can find your API key at '
                  'https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "code": "invalid_api_key"}}',
    "429": LOOP + "provider openai: POST http://127.0.0.1:18771/v1/chat/completions: 429 Too Many Requests after 6 attempts: "
                  '{"error": {"message": "Rate limit reached for gpt-x in organization org-1 on requests per min (RPM): '
                  'Limit 3, Used 3.", "type": "requests", "code": "rate_limit_exceeded"}}',
    "safety": LOOP + "provider anthropic: POST https://api.anthropic.com/v1/messages: 400 Bad Request: "
                     '{"type": "error", "error": {"type": "invalid_request_error", "message": "Output blocked by content '
                     'filtering policy"}}',
    "azure": LOOP + "provider openai: POST https://r.openai.azure.com/openai/v1/chat/completions: 400 Bad Request: "
                    '{"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI\'s content '
                    'management policy.", "type": null, "param": "prompt", "code": "content_filter", "status": 400, '
                    '"innererror": {"code": "ResponsibleAIPolicyViolation"}}}',
    "openai-flagged": LOOP + "provider openai: POST https://api.openai.com/v1/chat/completions: 400 Bad Request: "
                             '{"error": {"message": "Invalid prompt: your prompt was flagged as potentially violating our '
                             'usage policy.", "type": "invalid_request_error", "code": "invalid_prompt"}}',
    "model404": LOOP + "provider openai: POST http://127.0.0.1:18771/v1/chat/completions: 404 Not Found: "
                       '{"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.", '
                       '"type": "invalid_request_error", "param": null, "code": "model_not_found"}}',
    "res404": LOOP + "provider openai: POST http://127.0.0.1:18771/v1/chat/completions: 404 Not Found: {\"detail\": \"Not Found\"}",
    "context": LOOP + "provider openai: POST http://127.0.0.1:18771/v1/chat/completions: 400 Bad Request: "
                      '{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, your messages '
                      'resulted in 9000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}',
}


class InstallTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.binary = Path(self.tmp, "nodwyn-bin")
        self.binary.write_text("binary bytes")

    async def test_copies_the_local_binary_and_checks_it_runs(self):
        env = RecordingEnv()
        a = agent(self.tmp, binary=str(self.binary))
        await a.setup(env)
        self.assertEqual(env.uploads, {"/usr/local/bin/nodwyn": "binary bytes"})
        steps = [(c.command.removeprefix("set -o pipefail; ")[:40], c.user) for c in env.calls[1:]]
        self.assertEqual(steps[:3], [("mkdir -p /usr/local/bin", "root"), ("UPLOAD /usr/local/bin/nodwyn", None),
                                     ("chmod 755 /usr/local/bin/nodwyn", "root")])
        self.assertIn("does not run in the container", env.calls[4].command)
        self.assertEqual(env.calls[4].user, "root")
        # The check's output is the version: Harbor's setup does not run
        # `nodwyn version` a second time.
        self.assertEqual(len([c for c in env.calls if " version" in c.command]), 1, env.commands())
        self.assertEqual(a.version(), "v1.2.3")

    async def test_a_version_given_is_kept(self):
        env = RecordingEnv()
        a = agent(self.tmp, binary=str(self.binary), version="pinned-7")
        await a.setup(env)
        self.assertEqual(a.version(), "pinned-7")

    async def test_binary_from_the_environment_variable(self):
        env = RecordingEnv()
        a = agent(self.tmp, extra_env={"NODWYN_BINARY": str(self.binary)})
        await a.install(env)
        self.assertIn("/usr/local/bin/nodwyn", env.uploads)

    async def test_downloads_from_a_url_with_curl_or_wget(self):
        env = RecordingEnv()
        a = agent(self.tmp, url="https://example.org/nodwyn-linux-amd64?x=1&y=2")
        await a.install(env)
        self.assertEqual(env.uploads, {})
        dl = [c for c in env.calls if "curl -fsSL" in c.command][0]
        self.assertEqual(dl.user, "root")
        self.assertIn("wget -q -O", dl.command)
        self.assertIn("'https://example.org/nodwyn-linux-amd64?x=1&y=2'", dl.command)
        self.assertIn("neither curl nor wget", dl.command)
        self.assertFalse([c for c in env.calls if "apt-get" in c.command], "curl was there: nothing installed")

    async def test_a_download_without_curl_or_wget_has_harbor_install_curl(self):
        env = RecordingEnv(tools=())
        a = agent(self.tmp, url="https://example.org/nodwyn")
        await a.install(env)
        cmds = env.commands()
        inst = [i for i, c in enumerate(cmds) if "apt-get install -y curl ca-certificates" in c]
        self.assertEqual(len(inst), 1, cmds)
        self.assertEqual(env.calls[inst[0]].user, "root")
        self.assertEqual(env.calls[inst[0]].env, {"DEBIAN_FRONTEND": "noninteractive"})
        dl = [i for i, c in enumerate(cmds) if "curl -fsSL" in c]
        self.assertLess(inst[0], dl[0], "installed before the download")

    async def test_a_download_with_wget_only_installs_nothing(self):
        env = RecordingEnv(tools=("wget",))
        await agent(self.tmp, url="https://example.org/nodwyn").install(env)
        self.assertFalse([c for c in env.calls if "apt-get" in c.command or c.command.startswith("for m in")])

    async def test_no_curl_and_no_package_manager_says_what_to_do(self):
        env = RecordingEnv(tools=(), manager=None)
        with self.assertLogs("harbor", "WARNING") as logs:
            await agent(self.tmp, url="https://example.org/nodwyn").install(env)
        self.assertIn("No supported package manager", logs.output[0])
        dl = [c for c in env.calls if "curl -fsSL" in c.command][0]
        self.assertIn("no package manager Harbor could install curl with; give binary=PATH", dl.command)

    async def test_nothing_to_install_is_a_clear_error(self):
        with self.assertRaisesRegex(RuntimeError, r"Agent install failed: Nodwyn: nothing to install: .*binary=PATH.*url=URL"):
            await agent(self.tmp).setup(RecordingEnv())

    async def test_a_missing_binary_is_named_before_the_environment_is_built(self):
        # Harbor makes the agent before it builds the environment: the
        # mistake costs no container.
        with self.assertRaisesRegex(FileNotFoundError, r"/nowhere/nodwyn .*is not a file.*make build"):
            agent(self.tmp, binary="/nowhere/nodwyn")
        with self.assertRaisesRegex(FileNotFoundError, r"/nowhere/else .*NODWYN_BINARY"):
            agent(self.tmp, extra_env={"NODWYN_BINARY": "/nowhere/else"})
        agent(self.tmp, binary=str(self.binary))  # one that is there passes

    async def test_a_url_must_be_http(self):
        with self.assertRaisesRegex(ValueError, "http"):
            agent(self.tmp, url="file:///etc/passwd")
        agent(self.tmp, url="https://example.org/nodwyn")


class KwargTest(unittest.TestCase):
    def test_bad_values_are_refused_at_construction(self):
        with tempfile.TemporaryDirectory() as tmp:
            for kw, msg in [({"timeout": "soon"}, "duration"), ({"max_tool_calls": "many"}, "whole number"),
                            ({"max_tool_calls": 0}, "above 0"), ({"workdir": "app"}, "absolute"),
                            ({"no_kernel_floor": "perhaps"}, "true or false"), ({"script": "/nowhere/x"}, "not a file")]:
                with self.subTest(kw=kw), self.assertRaisesRegex((ValueError, FileNotFoundError), msg):
                    agent(tmp, **kw)

    def test_kwargs_as_harbor_parses_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = agent(tmp, timeout="55m", max_tool_calls="200", no_kernel_floor="true")
            cmd = a.run_command(["--provider", "openai"], "B")
            self.assertIn("--timeout 55m", cmd)
            self.assertIn("--max-tool-calls 200", cmd)
            self.assertIn("daemon --no-keychain --socket \"$SOCK\" --no-kernel-floor", cmd)
            self.assertRegex(cmd, r"run .*--no-kernel-floor")


class RunTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    INSTRUCTION = "Fix the server in server.py; the tests run pkill -f 'server.py' first.\nLine two."

    async def run_agent(self, a, env):
        ctx = H.AgentContext()
        await a.run(self.INSTRUCTION, env, ctx)
        return ctx

    async def test_openai_run(self):
        env = RecordingEnv()
        key = "sk-secret-key-123"
        a = agent(self.tmp, extra_env={"OPENAI_API_KEY": key, "OPENAI_BASE_URL": "http://proxy:4000/v1"})
        ctx = await self.run_agent(a, env)
        self.assertTrue(ctx.is_empty(), "run() leaves the context to populate_context_post_run")

        # Its own directories, private, before anything else; no key file
        # an earlier run left.
        prep = env.calls[0]
        self.assertIn("mkdir -p /logs/agent/nodwyn/config/nodwyn /logs/agent/nodwyn/data /logs/agent/nodwyn/run",
                      prep.command)
        self.assertIn("chmod 700 /logs/agent/nodwyn/config /logs/agent/nodwyn/config/nodwyn /logs/agent/nodwyn/data "
                      "/logs/agent/nodwyn/run", prep.command)
        self.assertIn("rm -f /logs/agent/nodwyn/instruction.txt /logs/agent/nodwyn/model.script "
                      "/logs/agent/nodwyn/exit_code /logs/agent/nodwyn/config/nodwyn/credentials.toml "
                      "/logs/agent/nodwyn/config/nodwyn/config.toml", prep.command)
        self.assertIsNone(prep.user)

        # The instruction travels as a file.
        self.assertEqual(env.uploads["/logs/agent/nodwyn/instruction.txt"], self.INSTRUCTION)

        run = env.run_call()
        cmd = run.command
        self.assertIsNone(run.user, "the run goes as the agent's user")
        self.assertIn("N=/logs/agent/nodwyn\n", cmd)
        self.assertIn('export XDG_CONFIG_HOME="$N/config" XDG_DATA_HOME="$N/data" XDG_RUNTIME_DIR="$N/run"', cmd)
        self.assertIn('SOCK="$N/run/daemon.sock"', cmd)
        self.assertRegex(cmd, r'nohup "\$BIN" daemon --no-keychain --socket "\$SOCK" >>"\$N/daemon.log" 2>&1 </dev/null &')
        self.assertIn('while [ ! -S "$SOCK" ]', cmd)
        run_line = [line for line in cmd.splitlines() if '"$BIN" run ' in line][0]
        for part in ['--daemon "$SOCK"', "--sandbox container", '-C "$WORKDIR"',
                     "--trajectory /logs/agent/trajectory.json", "--json", "--provider openai", "--model gpt-5",
                     "--base-url http://proxy:4000/v1", ' - <"$N/instruction.txt"', '>"$N/run.log"']:
            self.assertIn(part, run_line)
        # The progress (tool commands and their output) goes to a file, not
        # to what Harbor reads: a tool's "Connection refused" is no failure of the run's.
        self.assertIn(' - <"$N/instruction.txt" >"$N/run.log" 2>"$N/progress.log" &\n', cmd)
        self.assertIn('wait "$RPID"; echo $? >"$N/exit_code"\n', cmd)
        self.assertNotIn("tee", cmd)
        # The daemon is stopped after the run, by its pid, and only it.
        self.assertLess(cmd.index('"$BIN" run '), cmd.rindex("nodwyn_stop_daemon\n"))
        self.assertIn('kill "$p"', cmd)
        self.assertNotIn("pkill", cmd)
        self.assertNotIn("killall", cmd)
        # The key in nodwyn's credentials file, uploaded before the run and
        # made 0600; in no command's environment and on no command line.
        cred = "/logs/agent/nodwyn/config/nodwyn/credentials.toml"
        self.assertEqual(env.uploads[cred], f'[keys]\nopenai = "{key}"\n')
        upload = env.commands().index(f"UPLOAD {cred}")
        self.assertEqual(env.calls[upload + 1].command, f"set -o pipefail; chmod 600 {cred}")
        self.assertLess(upload, env.calls.index(run))
        for c in env.calls:
            self.assertEqual(c.env, {}, c)
            self.assertNotIn(key, c.command)
            self.assertNotIn("pkill -f", c.command, "the instruction is on no command line")
            self.assertNotIn("Line two", c.command)
        # A variable of the container's would win over the files: none reaches the daemon.
        self.assertLess(cmd.index("unset NODWYN_SOCKET NODWYN_PROFILE OPENAI_API_KEY ANTHROPIC_API_KEY "
                                  "OPENAI_BASE_URL ANTHROPIC_BASE_URL\n"), cmd.index(" daemon --no-keychain"))
        # The file goes once the run has started (the daemon has read it),
        # and whatever happens when the script ends.
        self.assertIn('nodwyn_forget_key "$RPID"', cmd)
        self.assertIn("trap 'nodwyn_stop_daemon; rm -f \"$CRED\" \"$CONF\"' EXIT", cmd)
        self.assertNotIn("/logs/agent/nodwyn/config/nodwyn/config.toml", env.uploads, "a base URL without a password is a flag")
        # Success: nothing is run after the run script.
        self.assertIs(env.calls[-1], run)

    async def test_the_instruction_goes_through_the_prompt_template(self):
        tpl = Path(self.tmp, "tpl.txt")
        tpl.write_text("Task: {{ instruction }} (be brief)")
        env = RecordingEnv()
        await self.run_agent(agent(self.tmp, prompt_template_path=tpl), env)
        self.assertEqual(env.uploads["/logs/agent/nodwyn/instruction.txt"], f"Task: {self.INSTRUCTION} (be brief)")

    async def test_anthropic(self):
        env = RecordingEnv()
        a = agent(self.tmp, model_name="anthropic/claude-sonnet-4-5", extra_env={"ANTHROPIC_API_KEY": "sk-ant-x"})
        await self.run_agent(a, env)
        run = env.run_call()
        self.assertIn("--provider anthropic --model claude-sonnet-4-5", run.command)
        self.assertNotIn("--base-url", run.command, "Harbor's default (…/v1) is not nodwyn's form of the URL")
        self.assertEqual(env.uploads["/logs/agent/nodwyn/config/nodwyn/credentials.toml"],
                         '[keys]\nanthropic = "sk-ant-x"\n')
        self.assertEqual(run.env, {})

        env = RecordingEnv()
        a = agent(self.tmp, model_name="anthropic/claude-sonnet-4-5",
                  extra_env={"ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_BASE_URL": "http://gw:8080"})
        await self.run_agent(a, env)
        self.assertIn("--base-url http://gw:8080", env.run_call().command)

    async def test_another_provider_is_spoken_to_as_openai_compatible(self):
        env = RecordingEnv()
        a = agent(self.tmp, model_name="openrouter/anthropic/claude-x", extra_env={"OPENROUTER_API_KEY": "or-key"})
        await self.run_agent(a, env)
        run = env.run_call()
        self.assertIn("--provider openai --model anthropic/claude-x --base-url https://openrouter.ai/api/v1",
                      run.command)
        self.assertEqual(env.uploads["/logs/agent/nodwyn/config/nodwyn/credentials.toml"], '[keys]\nopenai = "or-key"\n')

    async def test_api_base_wins(self):
        env = RecordingEnv()
        a = agent(self.tmp, api_base="http://10.0.0.2:8000/v1", extra_env={"OPENAI_BASE_URL": "http://other/v1"})
        await self.run_agent(a, env)
        self.assertIn("--base-url http://10.0.0.2:8000/v1", env.run_call().command)
        self.assertEqual(list(env.uploads), ["/logs/agent/nodwyn/instruction.txt"], "no key found: none passed")

    async def test_a_base_url_with_a_password_is_no_flag(self):
        # It would be on the command line of the run script's shell and of
        # the client for the whole run: it goes as nodwyn's config.toml.
        env = RecordingEnv()
        base = "https://user:pw-secret-77@gw.example/v1"
        a = agent(self.tmp, extra_env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base})
        await self.run_agent(a, env)
        self.assertEqual(env.uploads["/logs/agent/nodwyn/config/nodwyn/config.toml"],
                         f'[provider]\nbase_url = "{base}"\n')
        self.assertIn("set -o pipefail; chmod 600 /logs/agent/nodwyn/config/nodwyn/config.toml", env.commands())
        self.assertNotIn("--base-url", env.run_call().command)
        for c in env.calls:
            self.assertNotIn("pw-secret-77", c.command)
            self.assertEqual(c.env, {})

    async def test_no_key_for_the_official_endpoint_is_warned_about(self):
        with self.assertLogs("harbor", "WARNING") as logs:
            await self.run_agent(agent(self.tmp), RecordingEnv())
        self.assertIn("no API key found for provider openai", logs.output[0])

    async def test_a_provider_without_an_endpoint_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, r"no endpoint for provider 'hosted_vllm'.*api_base=URL or HOSTED_VLLM_BASE_URL"):
            await self.run_agent(agent(self.tmp, model_name="hosted_vllm/qwen"), RecordingEnv())

    async def test_no_model_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, "no model: give harbor run --model"):
            await self.run_agent(agent(self.tmp, model_name=None), RecordingEnv())

    async def test_files_are_given_to_the_agents_user(self):
        env = RecordingEnv()
        env.default_user = "agent"
        await self.run_agent(agent(self.tmp, extra_env={"OPENAI_API_KEY": "k"}), env)
        chown = [c for c in env.calls if c.command.startswith("set -o pipefail; chown")]
        self.assertEqual([c.command for c in chown],
                         ["set -o pipefail; chown agent /logs/agent/nodwyn/instruction.txt",
                          "set -o pipefail; chown agent /logs/agent/nodwyn/config/nodwyn/credentials.toml && "
                          "chmod 600 /logs/agent/nodwyn/config/nodwyn/credentials.toml"])
        self.assertEqual([c.user for c in chown], ["root", "root"])

    async def test_script_instead_of_a_model(self):
        script = Path(self.tmp, "m.script")
        script.write_text("> reply\nDone.\n")
        env = RecordingEnv()
        await self.run_agent(agent(self.tmp, model_name=None, script=str(script)), env)
        self.assertEqual(env.uploads["/logs/agent/nodwyn/model.script"], "> reply\nDone.\n")
        self.assertIn("--script /logs/agent/nodwyn/model.script", env.run_call().command)

    async def test_harbors_environment_logs_dir(self):
        # A simulated-user trial gives each role its own directory in the
        # environment (BaseAgent.environment_logs_dir): the adapter's files
        # and the trajectory go there.
        from pathlib import PurePosixPath
        env = RecordingEnv()
        a = agent(self.tmp, environment_logs_dir=PurePosixPath("/logs/roles/agent"))
        await self.run_agent(a, env)
        cmd = env.run_call().command
        self.assertIn("N=/logs/roles/agent/nodwyn\n", cmd)
        self.assertIn("--trajectory /logs/roles/agent/trajectory.json", cmd)
        self.assertIn("/logs/roles/agent/nodwyn/instruction.txt", env.uploads)
        self.assertNotIn("/logs/agent/", " ".join(env.commands()))
        # agent_dir still wins (the tests' temporary directories).
        b = agent(self.tmp, environment_logs_dir=PurePosixPath("/logs/roles/agent"), agent_dir="/tmp/x")
        self.assertEqual(b.trajectory_path, "/tmp/x/trajectory.json")
        self.assertEqual(agent(self.tmp).trajectory_path, "/logs/agent/trajectory.json", "Harbor's default")

    async def test_workdir(self):
        env = RecordingEnv()
        await self.run_agent(agent(self.tmp, workdir="/srv/task dir"), env)
        self.assertIn("WORKDIR='/srv/task dir'\n", env.run_call().command)

    async def expect_failure(self, outcome, exc_type):
        env = RecordingEnv(outcome=outcome)
        with self.assertRaises(H.NonZeroAgentExitCodeError) as cm:
            await self.run_agent(agent(self.tmp, extra_env={"OPENAI_API_KEY": "k"}), env)
        self.assertIs(type(cm.exception), exc_type, str(cm.exception))
        return str(cm.exception)

    async def test_a_rate_limited_run_is_harbors_rate_limit(self):
        msg = await self.expect_failure(
            f"exit=1\nerror={error_event(RATE_429)}\nend={end_event('failed', RATE_429)}", H.ApiRateLimitError)
        self.assertIn("(exit 1)", msg)
        self.assertIn("429 Too Many Requests", msg)
        self.assertIn("/logs/agent/nodwyn/run.log", msg)

    async def test_a_context_overflow_is_harbors_context_window(self):
        await self.expect_failure(f"exit=1\nerror={error_event(CONTEXT_400)}\nend={end_event('failed', CONTEXT_400)}",
                                  H.ContextWindowExceededError)

    async def test_a_failure_that_is_not_the_providers(self):
        text = "runtime/loop.scm:80:3: car: not a pair: ()"
        msg = await self.expect_failure(f"exit=1\nerror={error_event(text)}\nend={end_event('failed', text)}",
                                        H.NonZeroAgentExitCodeError)
        self.assertIn("not a pair", msg)

    async def test_the_deadline(self):
        msg = await self.expect_failure(f"exit=3\nend={end_event('deadline', 'the deadline passed', 40)}",
                                        H.NonZeroAgentExitCodeError)
        self.assertIn("(exit 3)", msg)
        self.assertIn("deadline (--timeout) ran out (status deadline, 40 tool calls)", msg)

    async def test_a_configuration_error_before_any_event(self):
        msg = await self.expect_failure(
            "exit=2\nstderr=nodwyn: the daemon on /logs/agent/nodwyn/run/daemon.sock: provider openai: "
            "no API key for https://api.openai.com/v1; set OPENAI_API_KEY", H.AgentAuthenticationError)
        self.assertIn("set OPENAI_API_KEY", msg)

    async def test_a_daemon_that_does_not_start(self):
        env = RecordingEnv(fail_run=H.ExecResult(
            return_code=1, stderr="nodwyn: the daemon exited before serving on /logs/agent/nodwyn/run/daemon.sock"))
        with self.assertRaisesRegex(H.NonZeroAgentExitCodeError, "the daemon exited before serving"):
            await self.run_agent(agent(self.tmp), env)
        self.assertIn("nodwyn_stop_daemon", env.calls[-1].command, "stopped after a failed run script too")
        self.assertNotIn("nodwyn_running \"$DPID\"", env.calls[-1].command, "the stop command starts nothing")

    async def test_a_cancelled_run_stops_the_daemon(self):
        env = RecordingEnv(run_exc=asyncio.CancelledError())
        with self.assertRaises(asyncio.CancelledError):
            await self.run_agent(agent(self.tmp), env)
        last = env.calls[-1].command
        self.assertTrue(last.endswith('nodwyn_stop_daemon\nrm -f "$CRED" "$CONF"\n'), last)
        self.assertNotIn(" daemon --no-keychain", last)


class ErrorWordsTest(unittest.TestCase):
    """nodwyn's error texts, in words Harbor's ERROR_PATTERNS classify."""

    CASES = [
        (RATE_429, H.ApiRateLimitError),
        ("provider openai: POST https://x/v1/chat/completions: 429 Too Many Requests after 6 attempts: "
         '{"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}', H.ApiUsageLimitError),
        (CONTEXT_400, H.ContextWindowExceededError),
        ("provider anthropic: POST https://api.anthropic.com/v1/messages: 400 Bad Request: "
         '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
         H.ContextWindowExceededError),
        ("provider openai: POST http://vllm/v1/chat/completions: 400 Bad Request: {\"message\": \"This model's maximum "
         "context length is 32768 tokens. However, you requested 40000 tokens (rate limits apply).\"}",
         H.ContextWindowExceededError),
        ("provider openai: POST http://x/v1/chat/completions: 413 Request Entity Too Large: too big", H.ContextWindowExceededError),
        ("provider openai: POST https://x/v1/chat/completions: 401 Unauthorized: {\"error\": \"bad key\"}",
         H.AgentAuthenticationError),
        ("provider openai: POST https://x/v1/chat/completions: 404 Not Found: {\"error\": \"The model `gpt-9` does not exist\"}",
         H.ModelNotFoundError),
        ("provider openai: POST https://x/v1/chat/completions: 500 Internal Server Error after 6 attempts: oops",
         H.ApiInternalServerError),
        ("provider anthropic: POST https://x/v1/messages: 529 status code 529 after 6 attempts: "
         '{"type":"overloaded_error"}', H.ApiOverloadedError),
        ("provider openai: POST https://x/v1/chat/completions: 503 Service Unavailable after 6 attempts: busy",
         H.ApiOverloadedError),
        ("provider openai: POST https://x/v1/chat/completions: 418 I'm a teapot: no", H.UnknownApiError),
        ("provider openai: POST https://x/v1/chat/completions: idle timeout: no data from the model for 2m0s "
         "(SSE comments and pings do not count) after 6 attempts", H.ApiResponseStalledError),
        ("provider openai: POST https://x/v1/chat/completions: request timeout: the request took longer than 10m0s",
         H.NetworkConnectionError),
        ("provider openai: POST https://x/v1/chat/completions: stream cut mid-reply: the stream ended with no "
         "finish_reason after 6 attempts", H.ApiConnectionClosedError),
        ("runtime/loop.scm:62:19: model-turn: provider openai: POST http://127.0.0.1:18555/v1/chat/completions: "
         "connection failed: dial tcp 127.0.0.1:18555: connect: connection refused after 6 attempts",
         H.NetworkConnectionError),
        ("provider openai: POST https://nowhere.invalid/v1/chat/completions: connection failed: dial tcp: lookup "
         "nowhere.invalid: no such host after 6 attempts", H.NetworkConnectionError),
        ("provider script: 429 Too Many Requests (m.script:4)", H.ApiRateLimitError),
        ("provider openai: no API key for https://api.openai.com/v1; set OPENAI_API_KEY", H.AgentAuthenticationError),
        (REAL["safety"], H.AgentSafetyRefusalError),
        (REAL["azure"], H.AgentSafetyRefusalError),
        (REAL["openai-flagged"], H.AgentSafetyRefusalError),
        ("provider openai: POST https://x/v1/chat/completions: 403 Forbidden: {\"error\": {\"code\": \"cyber_policy\", "
         "\"message\": \"This request was flagged for possible cybersecurity risk\"}}", H.AgentSafetyRefusalError),
        ("provider openai: POST https://x/v1/chat/completions: 403 Forbidden: {\"error\": \"Country not supported\"}",
         H.AgentAuthenticationError),
        (REAL["model404"], H.ModelNotFoundError),
        ("provider openai: POST http://vllm/v1/chat/completions: 400 Bad Request: {\"message\": \"qwen9 is not a valid model ID\"}",
         H.ModelNotFoundError),
        (REAL["res404"], H.ApiProviderResourceNotFoundError),
        (REAL["refused"], H.NetworkConnectionError),
        (REAL["401"], H.AgentAuthenticationError),
        (REAL["429"], H.ApiRateLimitError),
    ]

    def test_each_failure_is_classified_as_harbor_would(self):
        for text, want in self.CASES:
            with self.subTest(text=text[:70]):
                words = harbor_error_words(text)
                self.assertIsNotNone(words)
                # As the adapter prints them: nodwyn's text, then the words last.
                output = f"nodwyn: run exited 1\nnodwyn: {text}\nnodwyn: provider error: {words}\n"
                self.assertIs(H.classify(output), want, words)

    def test_not_a_provider_error(self):
        for text in [None, "", "runtime/loop.scm:80:3: car: not a pair: ()", "no progress: the same call 12 times"]:
            self.assertIsNone(harbor_error_words(text))

    def test_the_words_match_one_pattern_only(self):
        # Nothing after the phrase a pattern matches may match another.
        for text, want in self.CASES:
            words = harbor_error_words(text)
            self.assertIs(H.classify(words), want, words)


# What a run's progress may say: tool commands and their output, the
# model's words. None of it is the run's failure.
TOOL_NOISE = [
    "[2.0s] model: The server says Connection refused and gh says Not logged in; rate limit? API Error?",
    "[3.1s] shell-exec curl -s localhost:8080 → exit 7 curl: (7) Failed to connect to localhost port 8080: Connection refused",
    "[3.5s] shell-exec gh auth status → exit 1 You are Not logged in to any GitHub hosts",
    "[3.9s] shell-exec python3 fetch.py → exit 1 HTTP 429 too many requests: rate limit exceeded; SSL_connect failed",
    "[4.2s] shell-exec cat notes.txt → ok Output blocked by content filtering policy; Cannot use this model; Quota exceeded.",
]


def outcome_lines(code, error=None, end=None, stderr=()):
    """The lines the run script prints after its boundary, as run_command writes them."""
    lines = [f"exit={code}"]
    if error is not None:
        lines.append(f"error={error_event(error)}")
    if end is not None:
        lines.append(f"end={json.dumps({'seq': 9, 'type': 'run.end', 'data': end})}")
    lines += [f"stderr={line}" for line in stderr]
    return "\n".join(lines)


def failed(text, calls=3):
    return {"status": "failed", "text": text, "tool_call_count": calls}


class HarborClassificationTest(unittest.IsolatedAsyncioTestCase):
    """Each way a nodwyn run can end, through the adapter, classified as
    Harbor v0.22.0 classifies it: fake_harbor.classify runs Harbor's own
    ERROR_PATTERNS (all of them, in Harbor's order, the last match
    winning) over what the adapter's failure command prints. The run's
    progress is full of words those patterns match (TOOL_NOISE): the class
    must come from nodwyn's own line."""

    KINDS = [
        ("deadline", outcome_lines(3, end={"status": "deadline", "text": "stopped: the run's time limit was reached (55m0s)",
                                           "tool_call_count": 40}, stderr=TOOL_NOISE), H.NonZeroAgentExitCodeError),
        ("budget", outcome_lines(3, end={"status": "budget", "text": "stopped: the tool-call budget is used up (200 tool calls)",
                                         "tool_call_count": 200}, stderr=TOOL_NOISE), H.NonZeroAgentExitCodeError),
        ("no progress", outcome_lines(1, end={"status": "no-progress", "text": "stopped: the same call returned the same "
                                              "result 4 times in a row, so the run was making no progress",
                                              "tool_call_count": 9}, stderr=TOOL_NOISE), H.NonZeroAgentExitCodeError),
        ("an error in Scheme", outcome_lines(1, "runtime/loop.scm:80:3: car: not a pair: ()",
                                             failed("runtime/loop.scm:80:3: car: not a pair: ()"), TOOL_NOISE),
         H.NonZeroAgentExitCodeError),
        ("network refused", outcome_lines(1, REAL["refused"], failed(REAL["refused"]), TOOL_NOISE), H.NetworkConnectionError),
        ("auth 401", outcome_lines(1, REAL["401"], failed(REAL["401"]), TOOL_NOISE), H.AgentAuthenticationError),
        ("no key", outcome_lines(2, stderr=TOOL_NOISE[:1] + [
            "nodwyn: the daemon on /logs/agent/nodwyn/run/daemon.sock: provider openai: no API key for "
            "https://api.openai.com/v1; set OPENAI_API_KEY"]), H.AgentAuthenticationError),
        ("rate limit 429 after retries", outcome_lines(1, REAL["429"], failed(REAL["429"]), TOOL_NOISE), H.ApiRateLimitError),
        ("safety refusal 400 (Anthropic)", outcome_lines(1, REAL["safety"], failed(REAL["safety"]), TOOL_NOISE),
         H.AgentSafetyRefusalError),
        ("safety refusal 400 (Azure content filter)", outcome_lines(1, REAL["azure"], failed(REAL["azure"]), TOOL_NOISE),
         H.AgentSafetyRefusalError),
        ("safety refusal 400 (OpenAI invalid_prompt)",
         outcome_lines(1, REAL["openai-flagged"], failed(REAL["openai-flagged"]), TOOL_NOISE), H.AgentSafetyRefusalError),
        ("model not found 404", outcome_lines(1, REAL["model404"], failed(REAL["model404"]), TOOL_NOISE), H.ModelNotFoundError),
        ("resource not found 404", outcome_lines(1, REAL["res404"], failed(REAL["res404"]), TOOL_NOISE),
         H.ApiProviderResourceNotFoundError),
        ("context window", outcome_lines(1, REAL["context"], failed(REAL["context"]), TOOL_NOISE), H.ContextWindowExceededError),
        ("a daemon that died mid-run", outcome_lines(1, stderr=TOOL_NOISE + ["nodwyn: the daemon closed the connection"]),
         H.NonZeroAgentExitCodeError),
        ("no words at all", outcome_lines(1, stderr=TOOL_NOISE), H.NonZeroAgentExitCodeError),
    ]

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    async def classify(self, outcome):
        env = RecordingEnv(outcome=outcome)
        with self.assertRaises(H.NonZeroAgentExitCodeError) as cm:
            await agent(self.tmp, extra_env={"OPENAI_API_KEY": "k"}).run("task", env, H.AgentContext())
        return type(cm.exception), str(cm.exception), env.calls[-1].command

    async def test_each_way_a_run_ends(self):
        for name, outcome, want in self.KINDS:
            with self.subTest(name):
                got, msg, command = await self.classify(outcome)
                self.assertIs(got, want, msg)
                # Nothing of the progress reaches what Harbor reads.
                for noise in TOOL_NOISE:
                    self.assertNotIn(noise.split("→")[-1].strip()[:30], command)

    async def test_the_exit_code_is_nodwyns(self):
        for name, outcome, _ in self.KINDS:
            with self.subTest(name):
                _, msg, command = await self.classify(outcome)
                code = int(outcome.split("\n", 1)[0].removeprefix("exit="))
                self.assertTrue(command.endswith(f"; exit {code}"), command)
                self.assertIn(f"(exit {code})", msg)

    async def test_a_tools_connection_refused_keeps_nodwyns_class(self):
        # The case that went wrong: a deadline after a tool printed
        # "Connection refused" was filed as NetworkConnectionError, which
        # Harbor retries.
        outcome = outcome_lines(3, end={"status": "deadline", "text": "stopped: the run's time limit was reached (5m0s)",
                                        "tool_call_count": 7},
                                stderr=["[9.0s] shell-exec curl localhost:5000 → exit 7 curl: (7) Failed to connect to "
                                        "localhost port 5000: Connection refused", "nodwyn: deadline after 5m0s"])
        got, msg, _ = await self.classify(outcome)
        self.assertIs(got, H.NonZeroAgentExitCodeError, msg)
        self.assertIn("stopped: the run's time limit was reached (5m0s)", msg)
        self.assertNotIn("Connection refused", msg)
        # What the old adapter printed (the progress's last lines as the
        # cause) is classified as a network error: the data can tell.
        self.assertIs(H.classify("nodwyn: run exited 3\nnodwyn: [9.0s] shell-exec curl localhost:5000 → exit 7 curl: (7) "
                                 "Failed to connect to localhost port 5000: Connection refused"), H.NetworkConnectionError)

    async def test_a_soft_refusal_is_no_safety_stop(self):
        # Harbor skips its safety patterns when the output has
        # model_refusal_fallback (a refusal the model recovers from).
        text = LOOP + ('provider anthropic: POST https://api.anthropic.com/v1/messages: 400 Bad Request: '
                       '{"error": {"message": "violate our Usage Policy", "detail": "model_refusal_fallback"}}')
        got, msg, _ = await self.classify(outcome_lines(1, text, failed(text)))
        self.assertIs(got, H.UnknownApiError, msg)

    def test_harbors_patterns_are_whole_and_in_order(self):
        # The data copied from Harbor, not a shortened copy: 28 patterns,
        # each class Harbor names, the safety pattern before "API Error".
        names = [p.exception.__name__ for p in H.ERROR_PATTERNS]
        self.assertEqual(len(names), 28)
        self.assertEqual(names[0], "ApiRateLimitError")
        self.assertEqual(names[-1], "NetworkConnectionError")
        self.assertLess(names.index("AgentSafetyRefusalError"), names.index("UnknownApiError"))
        self.assertLess(names.index("ApiProviderResourceNotFoundError"), names.index("AgentSafetyRefusalError"))
        self.assertEqual(H.ERROR_PATTERNS_SOURCE[1:3], ("39b85872597ea710077d8c93095059bca3ca4ed2", "0.22.0"))
        self.assertIs(nodwyn_agent.Nodwyn.ERROR_PATTERNS, H.ERROR_PATTERNS, "the adapter is classified by them")

    def test_the_adapters_own_words_match_no_pattern(self):
        # Only nodwyn's line and the provider words may decide the class:
        # what the adapter says around them matches nothing.
        a = agent(self.tmp)
        for code in (None, 1, 2, 3, 130):
            cmd = a.failure_command(RunOutcome(exit_code=code, end={"status": "failed", "tool_call_count": 2}))
            p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
            self.assertIs(H.classify(p.stdout + "\n" + p.stderr), H.NonZeroAgentExitCodeError, p.stdout)


class CredentialsFileTest(unittest.TestCase):
    def test_any_key_reads_back_as_itself(self):
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            self.skipTest("no tomllib")
        for key in ["sk-plain-123", 'a"quote', "back\\slash", "ctl\x01\x1f\x7fchars", "new\nline", "tab\tand é ü"]:
            with self.subTest(key=key):
                text = nodwyn_agent.credentials_toml({"openai": key})
                self.assertEqual(tomllib.loads(text), {"keys": {"openai": key}})
        self.assertEqual(nodwyn_agent.credentials_toml({"openai": "k1", "anthropic": "k2"}),
                         '[keys]\nanthropic = "k2"\nopenai = "k1"\n')


class OutcomeTest(unittest.TestCase):
    def test_parse(self):
        b = "--- nodwyn-harbor " + "0" * 32 + " ---"
        out = RunOutcome.parse(f"exit=7\n{b}\nexit=1\nerror={error_event('x')}\nend=not json\nstderr=a\nstderr=\x1b[Kb", b)
        self.assertEqual((out.exit_code, out.error, out.end, out.stderr), (1, "x", None, ["a", "b"]))
        self.assertIsNone(RunOutcome.parse("exit=0", b).exit_code, "nothing counts before the boundary")
        self.assertIsNone(RunOutcome.parse(f"{b}\nexit=", b).exit_code)
        self.assertEqual(RunOutcome.parse(None, b).stderr, [])
        # Only an error event is one: a model.reply whose tool call has {"type": "error"} is not.
        reply = json.dumps({"seq": 3, "type": "model.reply", "data": {"text": "Connection refused", "tool_calls": [
            {"id": "c", "name": "x", "arguments": {"type": "error"}}]}})
        self.assertIsNone(RunOutcome.parse(f"{b}\nexit=1\nerror={reply}", b).error)

    def test_cause_is_nodwyns_own_line(self):
        # The run's progress is never the cause, whatever it says.
        tools = ["[3.1s] shell-exec curl localhost:8080 → exit 7 curl: (7) Failed to connect: Connection refused",
                 "[3.5s] shell-exec gh auth status → exit 1 Not logged in", "nodwyn: deadline after 3.6s"]
        self.assertEqual(RunOutcome(exit_code=3, end={"status": "deadline", "text": "stopped: the run's time limit was "
                                                      "reached (55m)"}, stderr=tools).cause(),
                         "stopped: the run's time limit was reached (55m)")
        # A finished run.end's text is the model's answer, never an error.
        self.assertIsNone(RunOutcome(exit_code=1, end={"status": "finished", "text": "Connection refused"}).cause())
        # No run.end: the run never started; nodwyn run's last "nodwyn: " line and what follows it.
        self.assertEqual(RunOutcome(exit_code=2, stderr=["x: Connection refused", "nodwyn: no such profile: 'nosuch'",
                                                         "choose one of lean full"]).cause(),
                         "no such profile: 'nosuch' choose one of lean full")
        self.assertIsNone(RunOutcome(exit_code=1, stderr=["Connection refused"]).cause())


class PostRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def populate(self):
        ctx = H.AgentContext()
        agent(self.tmp).populate_context_post_run(ctx)
        return ctx

    def write(self, doc):
        Path(self.tmp, "trajectory.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)

    def test_final_metrics(self):
        self.write({"schema_version": "ATIF-v1.4", "steps": [],
                    "final_metrics": {"total_prompt_tokens": 1200, "total_completion_tokens": 80,
                                      "total_cached_tokens": 900, "total_cost_usd": 0.0123, "total_steps": 3}})
        ctx = self.populate()
        self.assertEqual((ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens, ctx.cost_usd),
                         (1200, 80, 900, 0.0123))

    def test_totals_missing_are_summed_from_the_steps_or_left_none(self):
        self.write({"steps": [
            {"step_id": 1, "source": "user"},
            {"step_id": 2, "source": "agent", "metrics": {"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 60}},
            {"step_id": 3, "source": "agent", "metrics": {"prompt_tokens": 150, "completion_tokens": 7}},
        ], "final_metrics": {"total_prompt_tokens": 250, "total_completion_tokens": 12, "extra": {"status": "finished"}}})
        ctx = self.populate()
        self.assertEqual((ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens, ctx.cost_usd),
                         (250, 12, 60, None))

    def test_no_final_metrics(self):
        self.write({"steps": [{"metrics": {"prompt_tokens": 3, "completion_tokens": 1, "cost_usd": 0.5}},
                              {"metrics": {"prompt_tokens": 4, "completion_tokens": True}}]})
        ctx = self.populate()
        self.assertEqual((ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens, ctx.cost_usd), (7, 1, None, 0.5))

    def test_a_missing_or_broken_trajectory_leaves_the_context(self):
        self.assertTrue(self.populate().is_empty())
        self.write("{not json")
        self.assertTrue(self.populate().is_empty())
        self.write("[1, 2]")
        self.assertTrue(self.populate().is_empty())

    def test_run_end_when_there_is_no_trajectory(self):
        Path(self.tmp, "nodwyn").mkdir()
        Path(self.tmp, "nodwyn", "run.log").write_text(
            '{"seq":1,"type":"run.start","data":{}}\n' + end_event("budget", calls=9) + "\n")
        ctx = self.populate()
        self.assertEqual((ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens), (10, 2, None))
        self.assertEqual(ctx.metadata, {"nodwyn": {"status": "budget", "tool_call_count": 9}})


# ---------------------------------------------------------------------------
# The adapter's commands run for real.


class LocalEnv(H.BaseEnvironment):
    """Runs the adapter's commands with bash on this machine, as a container would."""

    def __init__(self, cwd: Path, home: Path):
        self.cwd = cwd
        self.default_user = None
        self.commands: list[tuple[str, dict]] = []
        base = {k: v for k, v in os.environ.items()
                if not (k.endswith("_API_KEY") or k.startswith("XDG_") or k.startswith("NODWYN_"))}
        base["HOME"] = str(home)
        # A sandbox-mode session keeps its scratch directory (in $TMPDIR):
        # in the test's own directory it goes with it.
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        base["TMPDIR"] = str(home / "tmp")
        self.base = base

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        self.commands.append((command, dict(env or {})))
        p = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd or self.cwd, env={**self.base, **(env or {})},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL)
        out, err = await asyncio.wait_for(p.communicate(), timeout=timeout_sec or 180)
        return H.ExecResult(return_code=p.returncode, stdout=out.decode(), stderr=err.decode())

    async def upload_file(self, source_path, target_path):
        shutil.copyfile(source_path, target_path)


class FakeOpenAI:
    """An OpenAI-compatible chat-completions server on 127.0.0.1: each request
    takes the next reply (("status", code, body) or ("sse", text, tool_call));
    after them, "Done."."""

    def __init__(self, replies, on_request=None):
        self.replies = list(replies)
        self.requests: list[tuple[dict, dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()} | {"path": self.path}, body))
                if on_request is not None:  # while the run waits for this reply
                    on_request()
                reply = outer.replies.pop(0) if outer.replies else ("sse", "Done.", None)
                if reply[0] == "status":
                    data = json.dumps(reply[2]).encode()
                    self.send_response(reply[1])
                    self.send_header("Retry-After", "3600")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                _, text, call = reply
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = {"role": "assistant", "content": text}
                if call:
                    delta["tool_calls"] = [{"index": 0, "id": "call_a", "type": "function",
                                            "function": {"name": call[0], "arguments": json.dumps(call[1])}}]
                chunks = [
                    {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if call else "stop"}]},
                    {"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010,
                                              "prompt_tokens_details": {"cached_tokens": 600}}},
                ]
                for c in chunks:
                    c.update({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model")})
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def holding(secret: bytes) -> list[str]:
    """The processes whose /proc/PID/environ or cmdline holds secret, of those this user can read."""
    found = []
    for d in Path("/proc").glob("[0-9]*"):
        for what in ("environ", "cmdline"):
            try:
                if secret in (d / what).read_bytes():
                    comm = (d / "comm").read_text().strip()
                    found.append(f"{comm} (pid {d.name}) in its {what}")
            except OSError:
                continue
    return found


def running(pid: int) -> bool:
    """pid is a live process (not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][:1] not in ("Z", "X")


# What the model runs first: a background service that must outlive the run,
# and a look at every process's command line for the instruction's marker
# and the key (the [x] keeps grep's own command line from matching).
PROBE = ("nohup sleep 300 >/dev/null 2>&1 & echo $! >> svc.pid; "
         "echo instruction-on-argv: $(grep -l -a 'zq-instructio[n]-7731' /proc/[0-9]*/cmdline 2>/dev/null | wc -l); "
         "echo key-on-argv: $(grep -l -a 'sk-test-key-552[1]' /proc/[0-9]*/cmdline 2>/dev/null | wc -l)")
INSTRUCTION = "Start the service (marker zq-instruction-7731) and say done."


@unittest.skipUnless(Path("/proc/self/stat").exists(), "needs Linux /proc")
class LocalRunTest(unittest.IsolatedAsyncioTestCase):
    binary: Path | None = None
    floor_flag: dict = {}

    @classmethod
    def setUpClass(cls):
        given = os.environ.get("NODWYN_TEST_BINARY")
        cls.build_dir = tempfile.mkdtemp()
        if given:
            cls.binary = Path(given)
        else:
            go = shutil.which(os.environ.get("NODWYN_TEST_GO") or "go")
            if go is None:
                raise unittest.SkipTest(f"no {os.environ.get('NODWYN_TEST_GO') or 'go'} command: the local run of the adapter's commands needs nodwyn built")
            cls.binary = Path(cls.build_dir, "nodwyn")
            p = subprocess.run([go, "build", "-trimpath", "-o", str(cls.binary), "./cmd/nodwyn"], cwd=REPO,
                               env={**os.environ, "CGO_ENABLED": "0"}, capture_output=True, text=True)
            if p.returncode != 0:
                raise AssertionError(f"go build ./cmd/nodwyn failed:\n{p.stderr}")
        doctor = subprocess.run([str(cls.binary), "doctor"], capture_output=True, text=True)
        # Where Landlock cannot be had the daemon refuses to serve: the test
        # then goes the no_kernel_floor way, which is also the adapter's.
        cls.floor_flag = {} if "kernel floor: on" in doctor.stdout else {"no_kernel_floor": True}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.build_dir, ignore_errors=True)

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="nh-"))
        self.addCleanup(shutil.rmtree, self.root, True)
        self.logs = self.root / "logs"
        self.app = self.root / "app"
        for d in (self.logs, self.app, self.root / "bin", self.root / "home"):
            d.mkdir()
        self.env = LocalEnv(self.app, self.root / "home")
        self.addCleanup(self.kill_daemons)

    def kill_daemons(self):
        """Daemons a failing test left: those this test's binary runs, by pid."""
        log = self.logs / "nodwyn" / "daemon.log"
        if not log.exists():
            return
        for pid in map(int, re.findall(r"\(pid (\d+)\)", log.read_text())):
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
            except OSError:
                continue
            if exe.startswith(str(self.root)) and running(pid):
                os.kill(pid, signal.SIGKILL)

    def make(self, **kw):
        return Nodwyn(logs_dir=self.logs, agent_dir=str(self.logs), install_path=str(self.root / "bin" / "nodwyn"),
                      workdir=str(self.app), binary=str(self.binary), **self.floor_flag, **kw)

    def kill_service(self):
        pidfile = self.app / "svc.pid"
        if pidfile.exists():
            for pid in map(int, pidfile.read_text().split()):
                if running(pid):
                    os.kill(pid, signal.SIGKILL)

    def events(self):
        return [json.loads(line) for line in (self.logs / "nodwyn" / "run.log").read_text().splitlines() if line]

    def assert_daemon_gone(self):
        log = (self.logs / "nodwyn" / "daemon.log").read_text()
        pids = [int(p) for p in re.findall(r"serving on .* \(pid (\d+)\)", log)]
        self.assertTrue(pids, log)
        for pid in pids:
            self.assertFalse(running(pid), f"daemon {pid} still running")
        self.assertFalse((self.logs / "nodwyn" / "run" / "daemon.pid").exists())

    async def test_scripted_run(self):
        script = self.root / "m.script"
        script.write_text("> reply\nStarting it.\ncall shell-exec " + json.dumps({"command": PROBE}) + "\n> reply\nDone.\n")
        a = self.make(script=str(script), model_name=None)
        await a.install(self.env)
        self.addCleanup(self.kill_service)
        ctx = H.AgentContext()
        await a.run(INSTRUCTION, self.env, ctx)

        n = self.logs / "nodwyn"
        for d in ("config", "data", "run"):
            self.assertEqual((n / d).stat().st_mode & 0o777, 0o700, d)
        results = [e["data"]["output"] for e in self.events() if e["type"] == "tool.result"]
        self.assertEqual(len(results), 1, results)
        self.assertIn("instruction-on-argv: 0", results[0])
        end = [e for e in self.events() if e["type"] == "run.end"][-1]["data"]
        self.assertEqual(end["status"], "finished")
        self.assertEqual(end["tool_call_count"], 1)
        # The folder, sandbox mode and the task as nodwyn saw them.
        start = self.events()[0]["data"]
        self.assertEqual((start["folder"], start["sandbox"], start["instruction"]),
                         (str(self.app.resolve()), True, INSTRUCTION))
        # The service the run started outlives the run and the daemon.
        (pid,) = map(int, (self.app / "svc.pid").read_text().split())
        self.assertTrue(running(pid), "the background service was stopped")
        self.assert_daemon_gone()

        a.populate_context_post_run(ctx)
        traj = json.loads((self.logs / "trajectory.json").read_text())
        self.assertEqual(ctx.n_input_tokens, traj["final_metrics"]["total_prompt_tokens"])
        self.assertGreater(ctx.n_input_tokens, 0)
        self.assertGreater(ctx.n_output_tokens, 0)
        self.assertEqual(ctx.metadata["nodwyn"]["status"], "finished")

        # A second run in the same container starts its own daemon again.
        await a.run("Again: say done.", self.env, H.AgentContext())
        self.assert_daemon_gone()

    async def test_a_stale_daemon_is_stopped_and_a_stranger_is_not(self):
        script = self.root / "m.script"
        script.write_text("> reply\nDone.\n")
        a = self.make(script=str(script), model_name=None)
        await a.install(self.env)
        n = self.logs / "nodwyn"
        for d in ("config", "data", "run"):
            (n / d).mkdir(parents=True, mode=0o700)
        env = {**self.env.base, "XDG_CONFIG_HOME": str(n / "config"), "XDG_DATA_HOME": str(n / "data"),
               "XDG_RUNTIME_DIR": str(n / "run")}
        floor = ["--no-kernel-floor"] if self.floor_flag else []
        # A daemon a cancelled run left behind, its pid in the pid file.
        stale = subprocess.Popen([str(self.root / "bin" / "nodwyn"), "daemon", "--socket", str(n / "run" / "old.sock"),
                                  *floor], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: stale.poll() is None and stale.kill())
        (n / "run" / "daemon.pid").write_text(str(stale.pid))
        await a.run("Say done.", self.env, H.AgentContext())
        self.assertIsNotNone(stale.wait(timeout=15), "the stale daemon was not stopped")
        self.assert_daemon_gone()

        # A pid file naming a process that is not this nodwyn: left alone.
        stranger = subprocess.Popen(["sleep", "30"])
        self.addCleanup(lambda: (stranger.kill(), stranger.wait()))
        (n / "run" / "daemon.pid").write_text(str(stranger.pid))
        await a.run("Say done.", self.env, H.AgentContext())
        self.assertIsNone(stranger.poll(), "a process that is not the daemon was killed")

    async def test_openai_compatible_server_and_the_key(self):
        # While the run waits for the model, every process there is (the run
        # script's shell, the client, the daemon, what the commands started)
        # is looked at, from outside the kernel floor: none holds the key in
        # the environment it was started with or on its command line.
        # The endpoint has a password too, which goes the way the key goes.
        seen: list[list[str]] = []
        server = FakeOpenAI([("sse", "Looking.", ("shell-exec", {"command": PROBE}))],
                            on_request=lambda: seen.append(holding(b"sk-test-key-5521") + holding(b"pw-canary-3141")))
        self.addCleanup(server.close)
        base = server.base_url.replace("http://", "http://gw:pw-canary-3141@")
        a = self.make(model_name="openai/gpt-test",
                      extra_env={"OPENAI_API_KEY": "sk-test-key-5521", "OPENAI_BASE_URL": base})
        await a.install(self.env)
        self.addCleanup(self.kill_service)
        ctx = H.AgentContext()
        await a.run(INSTRUCTION, self.env, ctx)

        self.assertGreaterEqual(len(server.requests), 2)
        self.assertEqual(len(seen), len(server.requests))
        for found in seen:
            self.assertEqual(found, [], "the key in a process's environment or command line during the run")
        # nodwyn read them from the files the adapter wrote, which are gone.
        self.assertEqual(list((self.logs / "nodwyn" / "config" / "nodwyn").iterdir()), [])
        for headers, body in server.requests:
            self.assertEqual(headers["authorization"], "Bearer sk-test-key-5521")
            self.assertEqual(headers["path"], "/v1/chat/completions")
            self.assertEqual(body["model"], "gpt-test")
        out = [e["data"]["output"] for e in self.events() if e["type"] == "tool.result"][0]
        self.assertIn("instruction-on-argv: 0", out)
        self.assertIn("key-on-argv: 0", out)
        for command, env in self.env.commands:
            self.assertNotIn("sk-test-key-5521", command)
            self.assertNotIn("pw-canary-3141", command)
            self.assertEqual(env, {})
        for f in self.logs.rglob("*"):
            if f.is_file():
                self.assertNotIn(b"sk-test-key-5521", f.read_bytes(), f"the key is written in {f}")
                self.assertNotIn(b"pw-canary-3141", f.read_bytes(), f"the endpoint's password is written in {f}")
        self.assert_daemon_gone()

        a.populate_context_post_run(ctx)
        n = len(server.requests)
        traj = json.loads((self.logs / "trajectory.json").read_text())
        self.assertEqual(ctx.n_output_tokens, 10 * n)
        # The context says what the trajectory says: each request's 1000
        # prompt tokens, the 600 read from the cache included (ATIF's
        # prompt_tokens counts them), and those 600 as cached tokens.
        self.assertEqual(ctx.n_input_tokens, traj["final_metrics"]["total_prompt_tokens"])
        self.assertEqual(ctx.n_cache_tokens, traj["final_metrics"]["total_cached_tokens"])
        self.assertEqual((ctx.n_input_tokens, ctx.n_cache_tokens), (1000 * n, 600 * n))
        agent_steps = [st for st in traj["steps"] if st["source"] == "agent"]
        self.assertEqual([st["metrics"]["cached_tokens"] for st in agent_steps], [600] * n)

    async def expect_classified(self, reply, exc_type):
        server = FakeOpenAI([reply])
        self.addCleanup(server.close)
        a = self.make(model_name="openai/gpt-test",
                      extra_env={"OPENAI_API_KEY": "sk-test-key-5521", "OPENAI_BASE_URL": server.base_url})
        await a.install(self.env)
        with self.assertRaises(H.NonZeroAgentExitCodeError) as cm:
            await a.run(INSTRUCTION, self.env, H.AgentContext())
        self.assertIs(type(cm.exception), exc_type, str(cm.exception))
        self.assert_daemon_gone()
        return str(cm.exception)

    async def test_429_is_a_rate_limit(self):
        msg = await self.expect_classified(
            ("status", 429, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
            H.ApiRateLimitError)
        self.assertIn("exit 1", msg)

    async def test_context_overflow_is_a_context_window(self):
        await self.expect_classified(
            ("status", 400, {"error": {"message": "This model's maximum context length is 8192 tokens.",
                                       "code": "context_length_exceeded"}}),
            H.ContextWindowExceededError)

    async def test_a_safety_refusal_is_harbors_safety_refusal(self):
        # Not retried by Harbor, unlike the UnknownApiError it was.
        msg = await self.expect_classified(
            ("status", 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": "Output blocked by content filtering policy"}}),
            H.AgentSafetyRefusalError)
        self.assertIn("400 Bad Request", msg)

    async def test_an_unknown_model_and_a_missing_resource(self):
        await self.expect_classified(
            ("status", 404, {"error": {"message": "The model `gpt-test` does not exist or you do not have access to it.",
                                       "code": "model_not_found"}}), H.ModelNotFoundError)
        await self.expect_classified(("status", 404, {"detail": "Not Found"}), H.ApiProviderResourceNotFoundError)

    async def test_a_bad_key_is_an_authentication_error(self):
        await self.expect_classified(("status", 401, {"error": {"message": "Incorrect API key provided",
                                                                "code": "invalid_api_key"}}), H.AgentAuthenticationError)

    async def test_what_the_tools_print_is_not_the_runs_failure(self):
        # The model runs commands whose output says "Connection refused",
        # "Not logged in", "rate limit", and writes a tool call whose
        # arguments hold {"type": "error"}; then the tool-call budget ends
        # the run (exit 3). Harbor files it as a plain non-zero exit, and
        # its message holds nodwyn's line, not the tools' output.
        noise = ("echo 'curl: (7) Failed to connect to localhost port 8080: Connection refused'; "
                 "echo 'You are Not logged in'; echo 'API Error: rate limit exceeded; Output blocked by content filtering policy'")
        script = self.root / "m.script"
        script.write_text(
            "> reply\nThe server says Connection refused.\ncall shell-exec " + json.dumps({"command": noise}) + "\n"
            "> reply\ncall shell-exec " + json.dumps({"command": "echo Not logged in", "type": "error"}) + "\n"
            "> reply\ncall shell-exec " + json.dumps({"command": "echo again"}) + "\n> reply\nDone.\n")
        a = self.make(script=str(script), model_name=None, max_tool_calls=2)
        await a.install(self.env)
        with self.assertRaises(H.NonZeroAgentExitCodeError) as cm:
            await a.run(INSTRUCTION, self.env, H.AgentContext())
        msg = str(cm.exception)
        self.assertIs(type(cm.exception), H.NonZeroAgentExitCodeError, msg)
        self.assertIn("(exit 3)", msg)
        self.assertIn("stopped: the tool-call budget is used up", msg)
        for word in ("Connection refused", "Not logged in", "rate limit", "content filtering"):
            self.assertNotIn(word, msg)
        # The progress is kept, in progress.log.
        progress = (self.logs / "nodwyn" / "progress.log").read_text()
        self.assertIn("Connection refused", progress)
        self.assert_daemon_gone()

    async def test_a_binary_that_does_not_run_is_named_at_install(self):
        bad = self.root / "not-a-binary"
        bad.write_bytes(b"\x7fELF garbage")
        a = Nodwyn(logs_dir=self.logs, install_path=str(self.root / "bin" / "nodwyn"), binary=str(bad))
        with self.assertRaisesRegex(H.NonZeroAgentExitCodeError, "does not run in the container.*static build"):
            await a.install(self.env)


if __name__ == "__main__":
    unittest.main()

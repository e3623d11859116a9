"""MAS-GPT, prompted (mastracebench.txt appendix "Adaptive MAS construction"; Ye et al. 2025).

**Label: "MAS-GPT (prompted)"** (:data:`MAS_GPT_LABEL`). The paper runs a separately fine-tuned
MAS-GPT-32B that writes a query-adaptive multi-agent program, executed with the task model; if
generation or execution fails, a fallback makes three candidate solutions and an LLM aggregator
gives the answer. We have no fine-tuned generator, so the backbone itself (role
``"programmer"``; ``MethodConfig.models["programmer"]`` may name a separate model) writes the
program from our template :data:`PROGRAM_TEMPLATE` (version :data:`PROGRAM_TEMPLATE_VERSION`).
The template is ours, written after the published one's idea (a Python program whose entry
point calls an LLM helper); its text is not theirs. Results are labelled prompted for this
reason. The method key stays ``"MAS-GPT"`` (Tables 2 and 9 name it so).

The workflow (:func:`run_session`, called by :func:`~.methods.run_mas_gpt`):

1. **Programmer call** (role ``programmer``, agent ``programmer``, round 0). The reply is read by
   :func:`extract_program`: the first fenced block (```python preferred) that is Python defining a
   top-level ``forward``; else a JSON object's ``program``/``code``/``source``/``python`` string
   (for JSON-constrained servers); else the raw reply; ``<think>`` spans are dropped. This is a
   shape check (does it parse, is there a ``forward``), not a security check.
2. **The program** defines ``forward(task: str) -> str`` and may call
   ``call_llm(instruction: str, role: str = "proposer", shown: list[str] | None = None) -> str``
   with a role of :data:`PROGRAM_ROLES`. ``task`` is the task prompt. Each call is sent to the
   parent process, which issues it as a recorded :class:`~.roles.Request` through the method's
   session (the task prompt, the role, the instruction, and ``context["proposals"]`` = the shown
   texts as ``{"agent": "shown<i>", "text"}``), so its tokens count in TC, the response cache and
   replay work by logical id, and the offline backend reads structure, not prose.
3. **Call ids.** Program call ``k`` (0-based, in the order the program issues them) is round
   ``k + 1``; its agent is a new agent ``mas-agent<k>`` (index ``k``), except a *revision*: a
   ``proposer`` call whose first shown text is exactly the latest reply of an earlier Proposer
   Agent is that agent's revision and keeps its name and index (several such agents: the one with
   fewest proposals so far, then the earliest). The program is deterministic given its replies, so
   the ids are replay-stable. Fallback calls are ``proposer``/``fallback<i>``/round 0 and
   ``aggregator``/``fallback-aggregator``/round 1: distinct from every program call by agent.
4. **Proposer outputs** (``PROPOSAL_OUTPUTS["MAS-GPT"]``). On the program path each Proposer
   Agent is a lineage of ``proposer`` calls: its initial proposal is its first reply, its final
   proposal its last revision (no revision: = initial); critic, reviewer, judge and aggregator
   replies are not proposals; a program without proposer calls records no Proposer Agents. On the
   fallback path the candidates are the Proposer Agents (initial = final) and the program's calls
   stay recorded (they were spent) but are not proposals. FPA is undefined (Table 9's dash).
5. **Fallback** (answer source ``fallback:<reason>``; the program path's is ``program``):
   ``not_code`` (no Python with a ``forward`` in the reply), ``error`` (the program raised, its
   process died or was killed by a limit, or it broke the protocol), ``timeout``, ``call_cap``
   (it asked for more than ``max_calls`` calls; the extra call is not issued) and ``bad_answer``
   (``forward`` returned a non-string or a string the task's parser cannot read: the program gave
   no answer, which the paper's "execution fails" covers). The fallback's own answer is final (an
   unreadable aggregator reply is an invalid answer). A failure that is not the model's (a
   :class:`~.llm_backend.BackendError` from a call) is not a fallback: it propagates.

**The sandbox** (:func:`run_program`) is a child Python process, started with
``sys.executable -s -S -B -P -c <runner>`` (no site, no user site, no bytecode, no script dir on
``sys.path``; ``-P`` from Python 3.11; not ``-I``, whose ``-E`` would drop ``PYTHONHASHSEED``) in an empty temporary working directory, with an environment built from scratch
(:func:`sandbox_env`: no inherited variables, so no API keys; ``PYTHONHASHSEED=0`` so set order is
reproducible), in its own session (process group), under POSIX ``resource`` limits set before the
program is compiled (:class:`SandboxLimits`: CPU seconds, address space, file size, open files,
and ``RLIMIT_NPROC = 0`` against fork bombs), and a wall-clock ``timeout`` that counts the child's
time only (not the parent's time answering its calls). The child talks to the parent in JSON
lines over its original stdin/stdout, which the runner moves to private descriptors before the
program runs; the program's ``print`` output (fd 1) goes to stderr, kept in a temporary file
(``ProgramRun.stderr``, the tail). On any end the process group is killed.

What it does **not** guarantee: it is a subprocess with limits, **not a security boundary**. The
program runs as the same user with the same file-system access (it may read and write any file
the user can), may open network connections, can reach the protocol descriptors, and as root
``RLIMIT_NPROC`` does not apply (so it may fork; the group is still killed at the end). Limits
missing on a platform (no ``resource`` module; macOS ignores ``RLIMIT_AS``) are not applied
(``ProgramRun.limits`` says which were). The parent waits on the pipes with ``select``, so the
sandbox needs a POSIX system. Run only programs of models you would let run code.
Replay caveat: a program killed by the timeout or CPU limit may be killed at a different point on
another machine, so its replay can ask a call the cache lacks.
"""

from __future__ import annotations

import ast
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .trajectory import Proposal, Trajectory

__all__ = [
    "FALLBACK_REASONS",
    "MAS_GPT_LABEL",
    "PROGRAM_ROLES",
    "PROGRAM_SHAPES",
    "PROGRAM_TEMPLATE",
    "PROGRAM_TEMPLATE_VERSION",
    "MethodSession",
    "ProgramRun",
    "SandboxLimits",
    "api_context",
    "extract_program",
    "program_instruction",
    "run_program",
    "run_session",
    "sandbox_env",
]

#: the name tables may print (the paper's MAS-GPT is a fine-tuned MAS-GPT-32B; ours is prompted)
MAS_GPT_LABEL = "MAS-GPT (prompted)"
#: the roles a program's ``call_llm`` may use (a subset of roles.ROLES)
PROGRAM_ROLES: tuple[str, ...] = ("proposer", "critic", "reviewer", "judge", "aggregator")
#: why a unit took the fallback path (answer source ``fallback:<reason>``)
FALLBACK_REASONS: tuple[str, ...] = ("not_code", "error", "timeout", "call_cap", "bad_answer")
#: the version of PROGRAM_TEMPLATE (change it whenever the template's text changes)
PROGRAM_TEMPLATE_VERSION = "mas-gpt-prompted/1"

#: the programmer's instruction (after the task prompt); ``{roles}`` and ``{max_calls}`` are filled in
PROGRAM_TEMPLATE = """\
Design a small multi-agent system that solves the task above, and write it as a Python program.

The program must define a top-level function

    def forward(task: str) -> str:

which receives the task text shown above and returns the final answer, as text in exactly the
format the task asks for. Inside the program you may call this function, which is already
provided (do not define or import it):

    call_llm(instruction: str, role: str = "proposer", shown: list[str] | None = None) -> str

Every call asks one new agent. The agent sees the task text, its role, your instruction, and the
texts in `shown` (for example other agents' solutions or feedback); it returns its reply as text.
Roles you may use:
{roles}
To have a proposer revise its own draft, pass that draft as the first text of `shown`.
Choose the agents, the order of the calls and how answers are combined to fit this task: a
single careful solver, several independent proposals with an aggregator, a critique and a
revision, a short debate, and so on. Use at most {max_calls} calls. Only Python's standard
library is available; there are no files, network or other processes to use, and the program has
a time limit. Return the text of a solution (for example an aggregator's reply), not a comment.

Reply with the program only, in one ```python code block."""

_ROLE_HELP = {
    "proposer": "writes a full solution in the task's format",
    "critic": "points out errors or weaknesses in the shown texts",
    "reviewer": "reviews a shown solution and suggests improvements",
    "judge": "decides between the shown solutions and gives the correct one in the task's format",
    "aggregator": "combines or selects among the shown solutions and replies with one solution in the task's format",
}

#: example programs, named by shape: what the offline backend's programmer writes (``offline.py``)
PROGRAM_SHAPES: dict[str, str] = {
    "ensemble": '''```python
def forward(task):
    drafts = [call_llm("Solve the task on your own. Reply in the required format.") for _ in range(3)]
    return call_llm("Candidate solutions are shown. Reply with the strongest one, unchanged, in the "
                    "required format.", role="aggregator", shown=drafts)
```''',
    "critique": '''```python
import json


def forward(task):
    draft = call_llm("Solve the task. Reply in the required format.")
    review = call_llm('Check the solution shown. Reply with JSON {"approve": true} if it is right, '
                      'otherwise {"approve": false, "feedback": "..."}.', role="critic", shown=[draft])
    try:
        approved = json.loads(review).get("approve") is True
    except (ValueError, AttributeError):
        approved = False
    if approved:
        return draft
    return call_llm("Revise your solution (shown first) using the critique. Reply in the required format.",
                    shown=[draft, review])
```''',
    "single": '''```python
def forward(task):
    print("one careful solver")  # a program's prints do not reach the protocol
    return call_llm("Think step by step, then give your solution in the required format.")
```''',
}


# ------------------------------------------------------------------ the programmer's reply

def program_instruction(max_calls: int) -> str:
    """The programmer call's instruction: :data:`PROGRAM_TEMPLATE` filled in."""
    roles = "\n".join(f"- {r}: {_ROLE_HELP[r]}" for r in PROGRAM_ROLES)
    return PROGRAM_TEMPLATE.format(roles=roles, max_calls=int(max_calls))


def api_context(max_calls: int) -> dict[str, Any]:
    """The programmer call's structured ``context["api"]``: what the program may use."""
    return {"template": PROGRAM_TEMPLATE_VERSION, "entry": "forward(task: str) -> str",
            "call": "call_llm(instruction: str, role: str = 'proposer', shown: list[str] | None = None) -> str",
            "roles": list(PROGRAM_ROLES), "max_calls": int(max_calls)}


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


def _defines_forward(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "forward":
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "forward"
                                                for t in node.targets):
            return True
    return False


def extract_program(text: str) -> str | None:
    """The program in a programmer's reply (module docstring, step 1); None if there is none."""
    if not isinstance(text, str):
        return None
    body = _THINK.sub("", text)
    blocks = [(lang.lower(), code) for lang, code in _FENCE.findall(body)]
    blocks.sort(key=lambda b: b[0] not in ("python", "py", "python3"))  # stable: python first
    for _, code in blocks:
        if _defines_forward(code):
            return code
    try:
        obj = json.loads(body.strip())
    except (ValueError, RecursionError):  # RecursionError: JSON nested ~1000 deep
        obj = None
    if isinstance(obj, dict):
        for key in ("program", "code", "source", "python"):
            if isinstance(obj.get(key), str):
                inner = extract_program(obj[key])
                if inner is not None:
                    return inner
    raw = body.strip()
    return raw if _defines_forward(raw) else None


# ------------------------------------------------------------------ the sandbox

@dataclass(frozen=True)
class SandboxLimits:
    """The program's limits: ``timeout`` wall-clock seconds of the child's own time, ``max_calls``
    LLM calls, and the POSIX resource limits (CPU seconds, address space and file size in bytes,
    open files; ``no_fork`` sets ``RLIMIT_NPROC`` to 0). ``max_line`` caps one protocol message."""

    timeout: float = 30.0
    max_calls: int = 24
    cpu_seconds: int = 30
    memory_bytes: int = 1 << 30
    file_bytes: int = 8 << 20
    open_files: int = 64
    no_fork: bool = True
    max_line: int = 8 << 20

    def __post_init__(self) -> None:
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or not self.timeout > 0:
            raise ValueError(f"timeout: seconds > 0, got {self.timeout!r}")
        for name, low in (("max_calls", 0), ("cpu_seconds", 1), ("memory_bytes", 1 << 24),
                          ("file_bytes", 1 << 16), ("open_files", 16), ("max_line", 1 << 10)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name}: an integer >= {low}, got {v!r}")

    def rlimits(self) -> list[tuple[str, int]]:
        """``(resource name, limit)`` pairs the child sets (soft = hard)."""
        out = [("RLIMIT_CPU", self.cpu_seconds), ("RLIMIT_AS", self.memory_bytes),
               ("RLIMIT_FSIZE", self.file_bytes), ("RLIMIT_NOFILE", self.open_files)]
        return out + ([("RLIMIT_NPROC", 0)] if self.no_fork else [])


@dataclass(frozen=True)
class ProgramRun:
    """How one program run ended: ``status`` ``"ok"`` (``answer`` is its string), ``"bad_answer"``
    (``forward`` returned a non-string), ``"error"``, ``"timeout"`` or ``"call_cap"``; ``detail``
    says why, ``calls`` counts the calls issued, ``stderr`` is the tail of the program's output and
    ``limits`` the resource limits the child applied."""

    status: str
    answer: str | None = None
    detail: str = ""
    calls: int = 0
    stderr: str = ""
    limits: dict[str, int] = field(default_factory=dict)


#: the child's side: protocol on private descriptors, limits, then the program
_RUNNER = r'''
import json, os, sys
_pin = os.fdopen(os.dup(0), "r", encoding="utf-8", newline="\n")
_pout = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
os.dup2(2, 1)


def _send(msg):
    _pout.write(json.dumps(msg) + "\n")
    _pout.flush()


def _finish(msg):
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass
    _send(msg)


_setup = json.loads(_pin.readline())
_applied = {}
try:
    import resource
except ImportError:
    resource = None
if resource is not None:
    for _name, _value in _setup["rlimits"]:
        _which = getattr(resource, _name, None)
        if _which is None:
            continue
        try:
            _hard = resource.getrlimit(_which)[1]
            if _hard != resource.RLIM_INFINITY:
                _value = min(_value, _hard)
            resource.setrlimit(_which, (_value, _value))
            _applied[_name] = _value
        except (ValueError, OSError):
            pass
_send({"op": "ready", "limits": _applied})
_ROLES = tuple(_setup["roles"])


def call_llm(instruction, role="proposer", shown=None):
    """Ask one new agent (see the template); returns its reply text."""
    if not isinstance(instruction, str):
        raise TypeError("call_llm: instruction must be a str")
    if role not in _ROLES:
        raise ValueError(f"call_llm: role {role!r} is not allowed; allowed: {', '.join(_ROLES)}")
    shown = [] if shown is None else [shown] if isinstance(shown, str) else list(shown)
    if not all(isinstance(t, str) for t in shown):
        raise TypeError("call_llm: shown must be a list of str")
    _send({"op": "call", "instruction": instruction, "role": role, "shown": shown})
    line = _pin.readline()
    if not line:
        raise SystemExit(3)
    return json.loads(line)["text"]


def _main():
    ns = {"__name__": "__mas_program__", "__builtins__": __builtins__, "call_llm": call_llm}
    try:
        exec(compile(_setup["source"], "<mas-program>", "exec"), ns)
        forward = ns.get("forward")
        if not callable(forward):
            raise NameError("the program defines no callable forward(task)")
        out = forward(_setup["task"])
    except BaseException as e:
        try:
            import traceback
            tb, msg = traceback.format_exc()[-4000:], str(e)[:2000]
        except BaseException:
            tb, msg = "", ""
        _finish({"op": "error", "type": type(e).__name__, "message": msg, "traceback": tb})
        return
    if isinstance(out, str):
        _finish({"op": "done", "answer": out})
    else:
        _finish({"op": "done", "answer": None, "type": type(out).__name__})


_main()
'''


def sandbox_env(home: str) -> dict[str, str]:
    """The child's whole environment (nothing inherited: no API keys); ``home`` is its cwd."""
    return {"PYTHONHASHSEED": "0", "PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1", "HOME": home, "TMPDIR": home, "LC_ALL": "C.UTF-8"}


def _command() -> list[str]:
    flags = ["-s", "-S", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])
    return [sys.executable, *flags, "-c", _RUNNER]


_TIMEOUT, _TOO_LONG = object(), object()


class _Lines:
    """Lines from a pipe, waiting at most a given time (POSIX ``select``)."""

    def __init__(self, fd: int, max_line: int) -> None:
        self.fd, self.max_line, self.buf = fd, max_line, b""

    def next(self, timeout: float) -> Any:
        """The next line (bytes), None at EOF, ``_TIMEOUT`` or ``_TOO_LONG``."""
        deadline = time.monotonic() + max(0.0, timeout)
        while b"\n" not in self.buf:
            if len(self.buf) > self.max_line:
                return _TOO_LONG
            left = deadline - time.monotonic()
            if left <= 0:
                return _TIMEOUT
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return _TIMEOUT
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line


def _exit_text(rc: int | None) -> str:
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def _stop(proc: subprocess.Popen) -> None:
    """Kill the child's process group (it is our child; its group id is its pid) and reap it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass
    proc.wait()
    for f in (proc.stdin, proc.stdout):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass


def _tail(f: Any, n: int = 4000) -> str:
    try:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - n))
        return f.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _call_fields(msg: Mapping[str, Any]) -> tuple[str, str, list[str]] | None:
    ins, role, shown = msg.get("instruction"), msg.get("role"), msg.get("shown")
    if not isinstance(ins, str) or role not in PROGRAM_ROLES or not isinstance(shown, list) \
            or not all(isinstance(t, str) for t in shown):
        return None
    return ins, role, shown


def _converse(proc: subprocess.Popen, source: str, task: str, ask: Callable[[str, str, list[str]], str],
              lim: SandboxLimits) -> ProgramRun:
    lines = _Lines(proc.stdout.fileno(), lim.max_line)
    applied: dict[str, int] = {}
    calls = 0

    def send(msg: Mapping[str, Any]) -> None:
        try:
            proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child is gone: its EOF is read next

    def end(status: str, detail: str = "", answer: str | None = None) -> ProgramRun:
        return ProgramRun(status, answer, detail, calls, "", dict(applied))

    send({"source": source, "task": task, "roles": list(PROGRAM_ROLES), "rlimits": lim.rlimits()})
    budget = float(lim.timeout)
    while True:
        t0 = time.monotonic()
        line = lines.next(budget)
        budget -= time.monotonic() - t0
        if line is _TIMEOUT:
            return end("timeout", f"the program ran past its {lim.timeout:g} s")
        if line is _TOO_LONG:
            return end("error", f"protocol: a message longer than {lim.max_line} bytes")
        if line is None:
            try:
                rc = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                rc = None
            return end("error", f"the program's process ended without an answer ({_exit_text(rc)})")
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError:
            return end("error", "protocol: a message that is not JSON")
        op = msg.get("op") if isinstance(msg, dict) else None
        if op == "ready":
            applied = {str(k): int(v) for k, v in dict(msg.get("limits") or {}).items()}
        elif op == "call":
            fields_ = _call_fields(msg)
            if fields_ is None:
                return end("error", "protocol: a call without a str instruction, an allowed role and str texts")
            if calls >= lim.max_calls:
                return end("call_cap", f"the program asked for more than {lim.max_calls} calls")
            calls += 1
            send({"text": ask(*fields_)})
        elif op == "done":
            answer = msg.get("answer")
            if isinstance(answer, str):
                return end("ok", answer=answer)
            return end("bad_answer", f"forward returned {msg.get('type', 'a non-string')}, not str")
        elif op == "error":
            return end("error", f"{msg.get('type', 'Error')}: {msg.get('message', '')}")
        else:
            return end("error", f"protocol: unknown message {op!r}")


def run_program(source: str, task: str, ask: Callable[[str, str, list[str]], str],
                limits: SandboxLimits | None = None) -> ProgramRun:
    """Run ``source``'s ``forward(task)`` in the sandbox (module docstring), answering each of its
    ``call_llm`` calls with ``ask(instruction, role, shown)``; an exception from ``ask`` is not the
    program's and propagates (the child is killed first)."""
    lim = limits or SandboxLimits()
    if not isinstance(lim, SandboxLimits):
        raise TypeError(f"limits: a SandboxLimits, got {type(lim).__name__}")
    with tempfile.TemporaryDirectory(prefix="mas-gpt-") as cwd, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd,
                                env=sandbox_env(cwd), bufsize=0, close_fds=True,
                                start_new_session=os.name == "posix")
        try:
            run = _converse(proc, source, task, ask, lim)
        finally:
            _stop(proc)
        return ProgramRun(run.status, run.answer, run.detail, run.calls, _tail(err), run.limits)


# ------------------------------------------------------------------ the workflow

class MethodSession(Protocol):
    """What the workflow needs of a method's per-unit session (``methods.py``): issue and record a
    call, grade a reply with the task, and build the trajectory."""

    task_prompt: str
    config: Any  # a MethodConfig (``proposers``: the fallback's candidates)

    def ask(self, role: str, agent: str, index: int, rnd: int, instruction: str,
            context: Mapping[str, Any] | None = None, sample: int = 0) -> str: ...

    def grade(self, text: str) -> Proposal: ...

    def done(self, traces: Sequence[tuple[str, Proposal, Proposal]], answer: Proposal | None,
             source: str) -> Trajectory: ...


_SOLVE = "Solve the task on your own. Reply in the required format."
_AGGREGATE = ("Candidate solutions are shown. Give the best final solution, selecting or combining them, in the "
              "required format.")


class _Lineages:
    """The program's calls as recorded requests, and its Proposer Agents (module docstring, 3-4)."""

    def __init__(self, s: MethodSession) -> None:
        self.s = s
        self.n = 0
        self.agents: list[list[Any]] = []  # [name, index, initial, final, latest text, proposals]

    def _owner(self, text: str) -> list[Any] | None:
        same = [a for a in self.agents if a[4] == text]
        return min(same, key=lambda a: a[5]) if same else None  # fewest proposals, then earliest

    def call(self, instruction: str, role: str, shown: list[str]) -> str:
        k, self.n = self.n, self.n + 1
        owner = self._owner(shown[0]) if role == "proposer" and shown else None
        name, index = (owner[0], owner[1]) if owner else (f"mas-agent{k}", k)
        ctx = {"proposals": [{"agent": f"shown{i}", "text": t} for i, t in enumerate(shown)]} if shown else {}
        text = self.s.ask(role, name, index, k + 1, instruction, ctx)
        if role == "proposer":
            p = self.s.grade(text)
            if owner:
                owner[3], owner[4], owner[5] = p, text, owner[5] + 1
            else:
                self.agents.append([name, index, p, p, text, 1])
        return text

    def traces(self) -> list[tuple[str, Proposal, Proposal]]:
        return [(a[0], a[2], a[3]) for a in self.agents]


def _fallback(s: MethodSession, reason: str) -> Trajectory:
    n = int(getattr(s.config, "proposers", 3))
    outs = []
    for i in range(n):
        text = s.ask("proposer", f"fallback{i}", i, 0, _SOLVE)
        outs.append((f"fallback{i}", text, s.grade(text)))
    ans = s.ask("aggregator", "fallback-aggregator", 0, 1, _AGGREGATE,
                {"proposals": [{"agent": a, "text": t} for a, t, _ in outs]})
    return s.done([(a, p, p) for a, _, p in outs], s.grade(ans), f"fallback:{reason}")


def run_session(s: MethodSession, limits: SandboxLimits | None = None) -> Trajectory:
    """MAS-GPT on one unit (appendix "Adaptive MAS construction"; module docstring): the programmer
    writes a program, the sandbox runs it with recorded calls, and any failure of
    :data:`FALLBACK_REASONS` runs the fallback (candidates + an aggregator)."""
    lim = limits or SandboxLimits()
    reply = s.ask("programmer", "programmer", 0, 0, program_instruction(lim.max_calls),
                  {"api": api_context(lim.max_calls)})
    source = extract_program(reply)
    if source is None:
        return _fallback(s, "not_code")
    book = _Lineages(s)
    run = run_program(source, s.task_prompt, book.call, lim)
    if run.status == "ok":
        answer = s.grade(run.answer or "")
        if answer.valid:
            return s.done(book.traces(), answer, "program")
        return _fallback(s, "bad_answer")
    return _fallback(s, run.status)

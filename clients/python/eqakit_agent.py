"""eqakit's agent protocol for Python: one file, standard library only; copy it into your project.

Write a class with an ``answer(question, episode)`` method and hand it to ``serve``::

    from eqakit_agent import Agent, serve

    class MyAgent(Agent):
        name = "my-agent"
        version = "0.1"

        def answer(self, question, episode):
            reply = self.complete([{"role": "user", "content": question["text"]}], maxTokens=64)
            self.log(f"the model said {reply['text']!r}")
            return reply["text"]

    if __name__ == "__main__":
        serve(MyAgent())

then run it with ``eqa answer --agent exec:"python3 my_agent.py" …``. eqakit speaks JSON-RPC 2.0
with the process over stdin and stdout, one message a line (docs/agent-protocol.md): stdout
belongs to the protocol, so ``print`` goes to stderr while the agent is served (eqakit records
stderr). ``answer`` returns the answer (a string or None) or a dict ``{"answer": …,
"confidence": …}``; an exception fails the question (or episode), reported to eqakit with its
message. ``self.memory(query)`` reads the episode's prebuilt scene graph when the run has one.

An active agent (``eqa explore --agent exec:"python3 my_agent.py" …``) sets
``supports = ["active"]`` and implements ``step(observation)`` (and, if it keeps state,
``reset(episode, observation)``, which by default returns ``self.step(observation)``). Each
returns an action name (``"move_forward"``, ``"turn_left"``, ``"turn_right"``, ``"look_up"``,
``"look_down"``), ``answer(text, confidence)`` to answer and end the episode, or ``STOP``
(or None) to end it without an answer::

    class Walker(Agent):
        name = "walker"
        supports = ["active"]

        def step(self, observation):
            if observation["budget"]["stepsLeft"] == 0:
                return answer("a sofa", 0.4)
            return "move_forward" if observation["lastAction"] is None or observation["lastAction"]["success"] else "turn_left"

A Mixed EQA agent (``eqa explore --episodes SET/episodes.json``, docs/mixed-eqa.md) sets
``supports = ["mixed"]``: it is an active agent whose ``reset`` episode also holds ``history``,
the earlier days it remembers (``{"days": [{"day", "when", "framesDir", "frameCount",
"actions"}]}``); ``self.history`` holds it during the episode.
"""

import json
import sys
import threading
import traceback

PROTOCOL_VERSION = "1"

#: The actions an active agent may take.
ACTIONS = ["move_forward", "turn_left", "turn_right", "look_up", "look_down"]

#: ``step`` returns this to end the episode without an answer.
STOP = {"stop": True}


def answer(text, confidence=None):
    """What ``step`` returns to answer the episode's question (and end the episode)."""
    decision = {"answer": None if text is None else str(text)}
    if confidence is not None:
        decision["confidence"] = float(confidence)
    return decision


def _decision(result):
    if result is None:
        return dict(STOP)
    if isinstance(result, str):
        return {"action": result}
    return result


class ProtocolError(Exception):
    """eqakit answered a callback with an error (a failed model call, invalid params)."""

    def __init__(self, code, message):
        super().__init__(f"{message} (code {code})")
        self.code = code


class Agent:
    """Base class: set ``name`` and ``version``, implement ``answer``; ``complete`` and ``log`` call back eqakit."""

    name = "python-agent"
    version = "0"
    supports = ["em-eqa"]
    _connection = None
    #: active agents: the current episode ({"id", "question", "scene", "framesDir"}), the actions offered, the budget ({"maxSteps", "timeMs", "timeoutMs"})
    episode = None
    actions = ACTIONS
    budget = None
    #: Mixed EQA episodes (task "mixed"): {"days": [{"day", "when", "framesDir", "frameCount", "actions"}]}, earliest day first
    history = None
    #: TAG-EQA questions (task "tag"): {"toGrounding", "poses", "actions"} of the question being answered (docs/tag-eqa.md)
    tag = None

    def initialize(self, task, settings):
        """Called once before any question, with the task kind and the run's settings."""

    def answer(self, question, episode):
        """question: {"id", "text", "category"?}; episode: {"id", "path", "kind", "frameCount", "frames"} or None."""
        raise NotImplementedError("answer")

    def reset(self, episode, observation):
        """Active agents: a new episode and its first observation; returns the first decision (by default ``self.step(observation)``)."""
        return self.step(observation)

    def step(self, observation):
        """Active agents: the observation after the last action ({"step", "frame": {"index", "path", "depthPath"}, "pose",
        "state", "camera", "lastAction", "budget": {"stepsLeft", "timeLeftMs"}}); returns an action name, ``answer(…)`` or ``STOP``."""
        raise NotImplementedError("step")

    def shutdown(self):
        """Called last, before the process is asked to exit."""

    def memory(self, query=None, limit=None):
        """The episode's prebuilt scene graph (eqa answer --memory DIR): {"episode", "objects": [{"id", "label", "caption",
        "centre", "size", "frames"}], "total"}; objects whose label or caption holds ``query`` when given. Raises
        ProtocolError when the run has no memory."""
        params = {}
        if query is not None:
            params["query"] = str(query)
        if limit is not None:
            params["limit"] = int(limit)
        return self._connection.request("memory/query", params)

    def complete(self, messages, **params):
        """Calls the run's model through eqakit (cached, retried, costed); returns {"text", "finishReason", "cached", "usage"}.

        A message's content is a string or a list of parts: {"type": "text", "text": …},
        {"type": "frame", "index": n} (a frame of the current episode) or
        {"type": "image", "data": base64, "mediaType": "image/png"}. params: temperature, topP,
        maxTokens, seed, stop, responseFormat, purpose.
        """
        return self._connection.request("model/complete", dict(params, messages=messages))

    def log(self, message, level="info"):
        """A line kept in the answer's trace."""
        self._connection.notify("log", {"message": str(message), "level": level})


class _Connection:
    def __init__(self, agent, stdin, stdout):
        self.agent = agent
        self.stdin = stdin
        self.stdout = stdout
        self.next_id = 1
        self.lock = threading.Lock()

    def send(self, message):
        with self.lock:
            self.stdout.write(json.dumps(message) + "\n")
            self.stdout.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        request_id = f"a{self.next_id}"
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        # eqakit sends nothing else while it waits for the answer this callback belongs to
        while True:
            line = self.stdin.readline()
            if not line:
                raise EOFError("eqakit closed the connection")
            if not line.strip():
                continue
            message = json.loads(line)
            if message.get("id") != request_id:
                continue
            if "error" in message:
                raise ProtocolError(message["error"].get("code"), message["error"].get("message"))
            return message.get("result")

    def handle(self, method, params):
        agent = self.agent
        if method == "initialize":
            agent.initialize(params.get("task"), params.get("settings", {}))
            return {"name": agent.name, "version": str(agent.version), "protocolVersion": PROTOCOL_VERSION, "supports": list(agent.supports)}
        if method == "answer":
            agent.tag = params.get("tag")
            result = agent.answer(params["question"], params.get("episode"))
            if isinstance(result, dict):
                return result
            return {"answer": None if result is None else str(result)}
        if method == "reset":
            agent.episode = params.get("episode")
            agent.history = (agent.episode or {}).get("history")
            agent.actions = params.get("actions", ACTIONS)
            agent.budget = params.get("budget")
            return _decision(agent.reset(params["episode"], params["observation"]))
        if method == "step":
            return _decision(agent.step(params["observation"]))
        if method == "shutdown":
            agent.shutdown()
            return None
        raise LookupError(f"unknown method {method}")

    def serve(self):
        while True:
            line = self.stdin.readline()
            if not line:
                return
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}})
                continue
            method = message.get("method")
            request_id = message.get("id")
            try:
                result = self.handle(method, message.get("params") or {})
                reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
            except LookupError as error:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": str(error)}}
            except Exception as error:  # the question fails, the agent goes on
                traceback.print_exc(file=sys.stderr)
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": f"{type(error).__name__}: {error}"}}
            if request_id is not None:
                self.send(reply)
            if method == "shutdown":
                return


def serve(agent, stdin=None, stdout=None):
    """Serves ``agent`` on stdin/stdout until eqakit sends shutdown or closes stdin."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    # stdout carries the protocol: anything printed goes to stderr
    sys.stdout = sys.stderr
    connection = _Connection(agent, stdin, stdout)
    agent._connection = connection
    connection.serve()

"""A Mixed EQA agent of your own, written from docs/agent-protocol.md: it reads its history (the
earlier days eqakit hands it in reset), finds the object the question names among its own actions,
looks up where it last put it, walks a few steps in the home as it is now, and answers.

    eqa explore --episodes mixed/episodes.json --agent exec:"python3 examples/mixed-agent/agent.py" --out runs/mixed-mine
    eqa agent check --agent exec:"python3 examples/mixed-agent/agent.py"

Its answers are object types ("desk"), "yes" or "no": the canonical values a Mixed EQA set scores
exactly. When the run has a model (--model) it also asks it once, through eqakit, about the frame
it sees at the end, and keeps its own answer when the model's reply is empty.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "clients" / "python"))

from eqakit_agent import Agent, answer, serve  # noqa: E402

#: Actions taken in the present home before answering: a look around and a few steps forward.
WALK = ["turn_left", "turn_left", "turn_left", "move_forward", "move_forward", "turn_right"]


def words(text):
    return " " + re.sub(r"[^a-z ]+", " ", text.lower()) + " "


class HistoryAgent(Agent):
    name = "mixed-history-example"
    version = "1.0"
    supports = ["mixed"]

    def initialize(self, task, settings):
        self.model = settings.get("model")

    def reset(self, episode, observation):
        self.question = episode["question"]["text"]
        self.walked = 0
        days = (self.history or {}).get("days", [])
        self.log(f"{len(days)} day(s) remembered, {sum(d['frameCount'] for d in days)} frame(s)")
        return self.step(observation)

    def named_object(self):
        """The object type the question names among those the agent acted on (the longest name that fits)."""
        asked = words(self.question)
        types = {a["object"]["type"] for d in self.history["days"] for a in d["actions"]}
        named = [t for t in types if f" {t} " in asked]
        return max(named, key=len) if named else None

    def last_place(self, kind):
        """Where the agent last put an object of this type (a receptacle's type), from its latest day on."""
        for day in reversed(self.history["days"]):
            for action in reversed(day["actions"]):
                if action["object"]["type"] == kind and action["action"] == "put" and "target" in action:
                    return action["target"]["type"]
        return None

    def remembered_answer(self):
        kind = self.named_object()
        if kind is None:
            return None
        if re.match(r"^(has|did|is|was)\b", self.question.lower()):
            return "no"
        return self.last_place(kind)

    def step(self, observation):
        if observation["budget"]["stepsLeft"] > 0 and self.walked < len(WALK):
            self.walked += 1
            return WALK[self.walked - 1]
        mine = self.remembered_answer()
        if self.model:
            reply = self.complete([{"role": "user", "content": [
                {"type": "text", "text": f"{self.question} Answer in one or two words."},
                {"type": "frame", "index": observation["frame"]["index"]},
            ]}], maxTokens=16)
            text = (reply.get("text") or "").strip()
            if text:
                return answer(text.lower().rstrip("."), 0.5)
        return answer(mine, 0.6 if mine else 0.0)


if __name__ == "__main__":
    serve(HistoryAgent())

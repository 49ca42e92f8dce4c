"""A TAG-EQA agent of your own that answers from its action history alone: "How many times did
you open the fridge after you picked up the mug?" is counted in the actions eqakit gives with
each question (self.tag), within the moment the question names (before, after, right before,
right after, between), and answered as a structured answer. It ignores other conditions (where
an object was, from which view), and leaves other questions unanswered.

    eqa answer-tag --questions datasets/tag/questions.json --agent exec:"python3 examples/agents/tag_history.py" --out runs/history
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "clients" / "python"))

from eqakit_agent import Agent, serve  # noqa: E402

# the questions' verbs (src/generate/phrases.ts), present and past, and the history's actions
VERBS = {"pick up": "pickup", "put down": "put", "open": "open", "close": "close", "turn on": "toggle_on", "turn off": "toggle_off",
         "slice": "slice", "fill": "fill", "empty": "empty", "break": "break", "heat": "heat", "cool": "cool", "clean": "clean"}
PAST = {"picked up": "pickup", "put down": "put", "opened": "open", "closed": "close", "turned on": "toggle_on", "turned off": "toggle_off",
        "sliced": "slice", "filled": "fill", "emptied": "empty", "broke": "break", "heated": "heat", "cooled": "cool", "cleaned": "clean"}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
EVENT = r"you (" + "|".join(PAST) + r") the ([a-z ]+?)(?: for the (" + "|".join(ORDINALS) + r") time)?"
MOMENTS = [
    ("between", re.compile(r"between the moment " + EVENT + r" and the moment " + EVENT + r"\?$")),
    ("right_before", re.compile(r"right before " + EVENT + r"\?$")),
    ("right_after", re.compile(r"right after " + EVENT + r"\?$")),
    ("before", re.compile(r"before " + EVENT + r"\?$")),
    ("after", re.compile(r"after " + EVENT + r"\?$")),
]
QUESTION = re.compile(r"^How many times did you (" + "|".join(VERBS) + r") the (.+)$")


class HistoryCounter(Agent):
    name = "tag-history"
    version = "1.0"
    supports = ["tag"]

    def step_of(self, verb, object_type, ordinal):
        """The step of the n-th such action on an object of that type (the questions number them per type)."""
        done = [a for a in self.tag["actions"] if a["action"] == PAST[verb] and a["object"]["type"] == object_type]
        n = ORDINALS.get(ordinal or "first", 1)
        return done[n - 1]["step"] if len(done) >= n else None

    def window(self, rest):
        """The steps the question's moment selects (as the generator's programs do), and its text left."""
        for key, pattern in MOMENTS:
            m = pattern.search(rest)
            if m is None:
                continue
            s1 = self.step_of(*m.group(1, 2, 3))
            if s1 is None:
                return None, rest
            if key == "between":
                s2 = self.step_of(*m.group(4, 5, 6))
                return ((s1, s2 - 1) if s2 is not None else None), rest[: m.start()]
            window = {"before": (0, s1 - 1), "after": (s1, 10**9), "right_before": (s1 - 1, s1 - 1), "right_after": (s1, s1)}[key]
            return window, rest[: m.start()]
        return (0, 10**9), rest.rstrip("?")

    def answer(self, question, episode):
        match = QUESTION.match(question["text"])
        if match is None or self.tag is None:
            return None
        action = VERBS[match.group(1)]
        window, rest = self.window(match.group(2))
        if window is None:
            return None
        # the object's type: the longest type acted on that the rest of the question starts with
        types = sorted({a["object"]["type"] for a in self.tag["actions"]}, key=len, reverse=True)
        object_type = next((t for t in types if rest.strip() == t or rest.startswith(t + " ")), None)
        if object_type is None:
            return None
        done = [a for a in self.tag["actions"] if a["action"] == action and a["object"]["type"] == object_type and window[0] <= a["step"] <= window[1]]
        self.log(f"{len(done)} times {action} {object_type} in steps {window}")
        objects = [{"type": a["object"]["type"], "position": a["object"]["position"]} for a in done]
        return json.dumps([{"predicate": "", "objects": objects, "value": len(done)}])


if __name__ == "__main__":
    serve(HistoryCounter())

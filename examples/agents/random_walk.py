"""A random walk as an active agent of your own: it moves forward while it can, turns a random
way when it meets a wall, and when its walk is over (its own --steps, or eqakit's step budget)
shows the run's model the last frames it saw and answers from them; without a model it stops.

    eqa explore --episodes episodes.json --env builtin --agent exec:"python3 examples/agents/random_walk.py --steps 40" --model openai/gpt-4o …
"""

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "clients" / "python"))

from eqakit_agent import STOP, Agent, answer, serve  # noqa: E402


class RandomWalk(Agent):
    name = "random-walk"
    version = "1.0"
    supports = ["active"]

    def __init__(self, steps, seed):
        self.steps = steps
        self.seed = seed
        self.model = None

    def initialize(self, task, settings):
        self.model = settings.get("model")

    def reset(self, episode, observation):
        # one seed per episode, so that a resumed run walks the same way
        self.random = random.Random(f"{self.seed}:{episode['id']}")
        self.frames = []
        self.log(f"walking {self.steps} steps in {episode['scene']} for: {episode['question']['text']}")
        return self.step(observation)

    def step(self, observation):
        if not self.frames or self.frames[-1] != observation["frame"]["index"]:
            self.frames.append(observation["frame"]["index"])
        if observation["step"] >= self.steps or observation["budget"]["stepsLeft"] == 0:
            return self.finish()
        last = observation["lastAction"]
        if last is not None and not last["success"]:
            return self.random.choice(["turn_left", "turn_right"])
        return "move_forward" if self.random.random() < 0.7 else self.random.choice(["turn_left", "turn_right"])

    def finish(self):
        if self.model is None:
            return STOP
        parts = [{"type": "frame", "index": i} for i in self.frames[-4:]]
        parts.append({"type": "text", "text": f"These are the last views of a walk through a home. Answer in a few words: {self.episode['question']['text']}"})
        reply = self.complete([{"role": "user", "content": parts}], temperature=0, maxTokens=64)
        return answer((reply["text"] or "").strip() or None, 0.5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="actions before answering (default 40)")
    parser.add_argument("--seed", default="0", help="the walk's seed")
    flags = parser.parse_args()
    serve(RandomWalk(flags.steps, flags.seed))

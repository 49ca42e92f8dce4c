"""OpenEQA's multi-frame VLM (GPT-4V) as an agent of your own: K frames sampled evenly from the
episode's history, sent between the two halves of OpenEQA's prompt as frames of the run's model
through eqakit (which prepares them as --image-size and --image-format say, caches and costs the
call).

    eqa answer --agent exec:"python3 examples/agents/multi_frame.py --frames 8" --frames data/frames --model openai/gpt-4o …
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "clients" / "python"))

from eqakit_agent import Agent, serve  # noqa: E402

# OpenEQA's GPT-4V prompt (prompts/SOURCES.md), split at "User Query:" as the reference splits it
PREFIX, SUFFIX = (HERE.parent.parent / "prompts" / "openeqa-gpt4v.txt").read_text().strip().split("User Query:")


def evenly(count, k):
    """k frame indices spread over 0 … count-1, first and last included (numpy.linspace, rounded)."""
    if count <= k:
        return list(range(count))
    if k == 1:
        return [0]
    return [round(i * (count - 1) / (k - 1)) for i in range(k)]


class MultiFrameAgent(Agent):
    name = "multi-frame-python"
    version = "1.0"

    def __init__(self, frames):
        self.frames = frames

    def answer(self, question, episode):
        # without --frames the question comes alone: the model is asked without images
        indices = evenly(episode["frameCount"], self.frames) if episode else []
        self.log(f"frames {indices} of {episode['frameCount'] if episode else 0}")
        content = [{"type": "text", "text": PREFIX.strip()}]
        content += [{"type": "frame", "index": i} for i in indices]
        content.append({"type": "text", "text": "User Query:" + SUFFIX.format(question=question["text"])})
        reply = self.complete([{"role": "user", "content": content}], maxTokens=128, temperature=0.2, seed=1234)
        return reply["text"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=50, help="frames per question (default 50, OpenEQA's GPT-4V setting)")
    serve(MultiFrameAgent(parser.parse_args().frames))

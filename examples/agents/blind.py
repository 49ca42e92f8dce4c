"""OpenEQA's blind LLM as an agent of your own: the question alone, asked of the run's model
through eqakit (so the call is cached, retried and costed like eqakit's built-in blind agent).

    eqa answer --agent exec:"python3 examples/agents/blind.py" --model openai/gpt-4o …
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "clients" / "python"))

from eqakit_agent import Agent, serve  # noqa: E402

# OpenEQA's blind-LLM prompt (prompts/SOURCES.md) and its baselines' parameters
PROMPT = (HERE.parent.parent / "prompts" / "openeqa-blind-llm.txt").read_text().strip()


class BlindAgent(Agent):
    name = "blind-python"
    version = "1.0"

    def answer(self, question, episode):
        print(f"answering {question['id']}")  # stdout belongs to the protocol: print() goes to stderr, which eqakit records
        reply = self.complete(
            [{"role": "user", "content": PROMPT.format(question=question["text"])}],
            temperature=0.2,
            maxTokens=128,
            seed=1234,
        )
        text = reply["text"]
        self.log(f"model replied {text!r} (cached: {reply['cached']})")
        if text is None:
            return None
        # OpenEQA's parse: the text after "A:" to the end of its line
        start = text.find("A:")
        if start == -1:
            return text.strip()
        return text[start:].split("\n")[0].replace("A:", "").strip()


if __name__ == "__main__":
    serve(BlindAgent())

"""LA-EQA's own evaluation functions run on given inputs, for bench/la-eqa.ts to compare with eqakit's.

Imports `EQAEvaluation` (eqa_evaluation.py) and `WorldModel` (belief_manager.py) from a copy of
mind-palace-laeqa/benchmark's `src/` that the caller extracted at run time (the repository has no
licence: nothing of it is kept in eqakit). The modules those files import only for other work
(openai, cv2, PIL, matplotlib: the API client, images and plots) are replaced by empty modules
when not installed; the judge's API call is replaced by a function that records the prompt and
returns the scripted reply, so `evaluate_answer_accuracy` runs its own prompt building and parsing.

Reads {"src": DIR, "cases": [...]} on stdin, each case {question, answer, start_place, best_path,
places: [[id, [x, y, z]], ...], distance, response, reply}; prints one JSON object per case:
{"prompt", "score" (null where the reference raises), "spl"}.
"""
import importlib.util
import json
import os
import sys
import types


def stub_missing(names):
    for name in names:
        if importlib.util.find_spec(name) is None:
            module = types.ModuleType(name)
            sys.modules[name] = module
            if name == "matplotlib":
                sys.modules["matplotlib.pyplot"] = types.ModuleType("matplotlib.pyplot")
                module.pyplot = sys.modules["matplotlib.pyplot"]
            if name == "PIL":
                sys.modules["PIL.Image"] = types.ModuleType("PIL.Image")
                module.Image = sys.modules["PIL.Image"]


class Place:
    def __init__(self, position):
        self.position = position


class SceneGraph:
    def __init__(self, places):
        self.place_nodes = {pid: Place(position) for pid, position in places}


class Beliefs:
    def __init__(self, scene):
        self.M_mind_palace = {"now": scene}


def main():
    request = json.load(sys.stdin)
    stub_missing(["openai", "cv2", "PIL", "matplotlib"])
    sys.path.insert(0, request["src"])
    os.environ.setdefault("OPENAI_API_KEY", "not-used")
    from contextual_long_term_reasoning.eqa_evaluation import EQAEvaluation
    from contextual_long_term_reasoning.belief_manager import WorldModel

    out = []
    quiet = open(os.devnull, "w")
    for case in request["cases"]:
        evaluation = EQAEvaluation(case["question"], case["start_place"], case["answer"], case["best_path"])
        sent = []

        def reply(messages, vision_query=False, verbose=False, _case=case, _sent=sent):
            _sent.append(messages[0]["content"])
            return _case["reply"]

        evaluation.oa_interface.call_openai_api = reply
        stdout, sys.stdout = sys.stdout, quiet
        try:
            try:
                score = evaluation.evaluate_answer_accuracy(case["response"])
            except Exception:
                score = None
            scene = SceneGraph(case["places"])
            spl = evaluation.evaluate_SPL(Beliefs(scene), WorldModel({"now": scene}), case["distance"])
        finally:
            sys.stdout = stdout
        out.append({"prompt": sent[0] if sent else None, "score": score, "spl": spl})
    print(json.dumps(out))


main()

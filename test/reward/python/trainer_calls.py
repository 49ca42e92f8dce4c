"""Calls clients/python/eqa_rm.py the way each trainer does, against a running reward server.

Usage: trainer_calls.py CLIENT_DIR SHAPE. Prints one JSON line of what the trainer received.
- verl: verl's reward loop (reward_model.use_reward_loop=True; the loop's naive manager,
  run_single), which awaits compute_score_async(data_source=, solution_str=, ground_truth=,
  extra_info=) once per sample when inspect.iscoroutinefunction says it is a coroutine function,
  the samples gathered at once, 8 rollouts of one prompt (rollout.n = 8) sharing the row's
  extra_info (to which verl adds num_turns and rollout_reward_scores).
- verl-naive: verl's classic naive reward manager (use_reward_loop=False), which calls
  compute_score(data_source=, solution_str=, ground_truth=, extra_info=) synchronously, one
  sample after another, and reads result["score"] when the result is a dict.
- verl-batch: verl's batch reward manager, compute_score(data_sources=, solution_strs=,
  ground_truths=, extra_infos=) with the whole batch.
- trl: GRPOTrainer._calculate_rewards on two processes, each calling
  reward_func(prompts=, completions=, completion_ids=, label=, trainer_state=, log_extra=,
  log_metric=) with its slice of the 8 completions of one conversational prompt.
- openrlhf: OpenRLHF's SingleTurnAgentExecutor, one POST {"query": [q], "prompts": [p],
  "labels": [l]} per sample, reading "rewards" and "scores" of the reply.
"""
import asyncio
import inspect
import json
import sys
import threading
import urllib.request
import os

sys.path.insert(0, sys.argv[1])
import eqa_rm  # noqa: E402

shape = sys.argv[2]
label = lambda variant: json.dumps({"score": 8, "variant": variant})  # noqa: E731
good = "<critique>The agent found the backpack by the chair.</critique><score>8</score>"
poor = "<critique>Frames out of order.</critique><score>2</score>"


def verl():
    function = eqa_rm.compute_score_async

    async def run_single(k):
        extra = {"index": 17, "split": "train", "num_turns": None, "rollout_reward_scores": {}}
        kwargs = {"data_source": "eqa_rm", "solution_str": good if k % 2 == 0 else poor, "ground_truth": label("original"), "extra_info": extra}
        if inspect.iscoroutinefunction(function):
            result = await function(**kwargs)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, lambda: function(**kwargs))
        return {"reward_score": result["score"] if isinstance(result, dict) else result, "reward_extra_info": result, "awaited": inspect.iscoroutinefunction(function)}

    async def main():
        return await asyncio.gather(*[run_single(k) for k in range(8)])

    return asyncio.run(main())


def verl_naive():
    function = eqa_rm.compute_score
    variants = ["original", "temporal", "original", "spatial"]
    texts = [good, poor, poor, good]
    rewards = []
    for variant, text in zip(variants, texts):
        extra = {"index": 5, "num_turns": None, "rollout_reward_scores": {}}
        score = function(data_source="eqa_rm", solution_str=text, ground_truth=label(variant), extra_info=extra)
        reward = score["score"] if isinstance(score, dict) else score
        rewards.append({"reward": reward, "type": type(reward).__name__, "coroutine_function": inspect.iscoroutinefunction(function), "extra": score if isinstance(score, dict) else None})
    return rewards


def verl_batch():
    variants = ["original"] * 4 + ["temporal"] * 4
    texts = [good] * 4 + [poor] * 4
    return eqa_rm.compute_score_batch(data_sources=["eqa_rm"] * 8, solution_strs=texts, ground_truths=[label(v) for v in variants], extra_infos=[{"index": 3}] * 8)


def trl():
    prompt = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Evaluate the agent's response."}]}]
    completions = [[{"role": "assistant", "content": good if k % 2 == 0 else poor}] for k in range(8)]
    results, metrics = {}, []

    def process(rank, start, end):
        results[rank] = eqa_rm.trl_reward(
            prompts=[prompt] * (end - start),
            completions=completions[start:end],
            completion_ids=[[1, 2, 3]] * (end - start),
            label=[label("original")] * (end - start),
            trainer_state=None,
            log_extra=lambda column, values: None,
            log_metric=lambda name, value: metrics.append([name, value]),
        )

    threads = [threading.Thread(target=process, args=(0, 0, 3)), threading.Thread(target=process, args=(1, 3, 8))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"rewards": results[0] + results[1], "metrics": metrics, "name": eqa_rm.trl_reward.__name__}


def openrlhf():
    prompt = "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Evaluate.<|im_end|>\n<|im_start|>assistant\n"
    expanded = prompt.replace("<|image_pad|>", "<|image_pad|>" * 300)
    replies = [None] * 8

    def sample(k):
        query = expanded + (good if k % 2 == 0 else poor) + "<|im_end|>"
        body = json.dumps({"query": [query], "prompts": [prompt], "labels": [label("original")]}).encode()
        request = urllib.request.Request(os.environ["EQA_RM_URL"], data=body, headers={"content-type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            info = json.loads(response.read())
        score = info.get("scores")
        replies[k] = {"reward": info.get("rewards"), "scores": score if score is not None else info.get("rewards"), "extra_logs": info.get("extra_logs")}

    threads = [threading.Thread(target=sample, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return replies


print(json.dumps({"verl": verl, "verl-naive": verl_naive, "verl-batch": verl_batch, "trl": trl, "openrlhf": openrlhf}[shape]()))

"""Reward functions for verl and TRL that ask eqakit's reward server (`eqa rm serve`).

Standard library only. Copy this file next to the training script, start the server, then:

- verl, which calls `custom_reward_function.name` in one of two ways:
  - its reward loop (`reward_model.use_reward_loop=True`, verl's default): `name=compute_score_async`,
    a coroutine the loop awaits once per sample, all at once, so a prompt's samples reach the
    server together (no thread pool caps how many wait);
  - its classic reward managers (`reward_model.use_reward_loop=False`): `name=compute_score_batch`
    with `reward_model.reward_manager=batch` (one request for the whole batch, groups complete),
    or `name=compute_score` with `reward_manager=naive` or `dapo`, a plain function they call
    one sample after another (start the server without --group-size then: each call waits for
    its reply before the next sample is sent).
- TRL: `GRPOTrainer(..., reward_funcs=eqa_rm.trl_reward)`; each process calls it with its slice.

The server is found at `EQA_RM_URL` (default http://127.0.0.1:5000/get_reward); `EQA_RM_TOKEN`,
when set, is sent as `Authorization: Bearer TOKEN`; `EQA_RM_TIMEOUT` (seconds, default 120) must
exceed the server's --group-timeout. Start the server with `--group-size` set to the trainer's
samples per prompt (verl's `actor_rollout_ref.rollout.n`, TRL's `num_generations`) so that each
reward is computed with its whole group; `full_group` in the reply says whether it was.
"""

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["get_rewards", "get_rewards_async", "compute_score", "compute_score_async", "compute_score_batch", "trl_reward"]


def _url():
    return os.environ.get("EQA_RM_URL", "http://127.0.0.1:5000/get_reward")


def _request(queries, labels, prompts, groups, token):
    body = {"query": list(queries), "labels": [_label_text(label) for label in labels]}
    if prompts is not None:
        body["prompts"] = list(prompts)
    if groups is not None:
        body["groups"] = [str(g) for g in groups]
    headers = {"content-type": "application/json"}
    token = token if token is not None else os.environ.get("EQA_RM_TOKEN")
    if token:
        headers["authorization"] = "Bearer " + token
    return json.dumps(body).encode("utf-8"), headers


def _timeout(timeout):
    return timeout if timeout is not None else float(os.environ.get("EQA_RM_TIMEOUT", "120"))


def get_rewards(queries, labels, prompts=None, groups=None, url=None, token=None, timeout=None):
    """POST one request to the reward server and return its JSON reply.

    queries: the policy's outputs (or prompt + output, as OpenRLHF sends them); labels: the
    ground truth of each, a score ("7") or eqakit's JSON label; prompts: the prompt of each
    (optional); groups: the key of each sample's group (optional; the label's "group" wins).
    """
    data, headers = _request(queries, labels, prompts, groups, token)
    request = urllib.request.Request(url or _url(), data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=_timeout(timeout)) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        raise RuntimeError("eqakit reward server answered %d: %s" % (error.code, detail)) from None


async def get_rewards_async(queries, labels, prompts=None, groups=None, url=None, token=None, timeout=None):
    """`get_rewards` as a coroutine over asyncio streams (plain HTTP; no thread is held while waiting)."""
    target = urllib.parse.urlsplit(url or _url())
    if target.scheme != "http":
        raise ValueError("the asynchronous client speaks plain http; use get_rewards for " + target.scheme)
    data, headers = _request(queries, labels, prompts, groups, token)
    host, port = target.hostname, target.port or 80
    head = "POST %s HTTP/1.1\r\nhost: %s:%d\r\ncontent-length: %d\r\nconnection: close\r\n" % (target.path or "/", host, port, len(data))
    head += "".join("%s: %s\r\n" % item for item in headers.items()) + "\r\n"

    async def exchange():
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(head.encode("latin-1") + data)
            await writer.drain()
            return await reader.read()
        finally:
            writer.close()

    raw = await asyncio.wait_for(exchange(), _timeout(timeout))
    header, _, payload = raw.partition(b"\r\n\r\n")
    status = int(header.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in header.lower():
        payload = _unchunk(payload)
    if status != 200:
        raise RuntimeError("eqakit reward server answered %d: %s" % (status, payload.decode("utf-8", "replace")))
    return json.loads(payload.decode("utf-8"))


def _unchunk(payload):
    out, rest = b"", payload
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2:]
    return out


def _label_text(label):
    if isinstance(label, str):
        return label
    if isinstance(label, dict):
        return json.dumps(label)
    return str(label)


def _details(reply, i):
    logs = reply.get("extra_logs") or {}
    return {
        "score": float(reply["rewards"][i]),
        "score_01": float(reply["scores"][i]),
        "accuracy_reward": logs.get("accuracy_reward", [0.0] * (i + 1))[i],
        "format_reward": logs.get("format_reward", [0.0] * (i + 1))[i],
        "contrastive_reward": logs.get("contrastive_reward", [0.0] * (i + 1))[i],
        "full_group": float(bool((reply.get("full_group") or [True] * (i + 1))[i])),
    }


def _verl_group(ground_truth, extra_info):
    # The rollouts of one prompt share its row's extra_info; its "index" names the row.
    if isinstance(extra_info, dict):
        for key in ("group", "index"):
            if extra_info.get(key) is not None:
                return str(extra_info[key])
    return _label_text(ground_truth)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function for one sample, called synchronously (the classic naive and
    dapo reward managers, the reward loop's remote manager): a dict whose "score" is the reward.

    Extra keywords verl may pass (reward_router_address, reward_model_tokenizer, custom
    reward_kwargs) are accepted and ignored.
    """
    reply = get_rewards([solution_str], [ground_truth], groups=[_verl_group(ground_truth, extra_info)])
    return _details(reply, 0)


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """`compute_score` as a coroutine, for verl's reward loop, which awaits a coroutine function
    once per sample, all of a batch at once (so a prompt's samples reach the server together)."""
    reply = await get_rewards_async([solution_str], [ground_truth], groups=[_verl_group(ground_truth, extra_info)])
    return _details(reply, 0)


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's batch reward manager (`reward_model.reward_manager=batch`): one request for the batch."""
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    groups = [_verl_group(g, e) for g, e in zip(ground_truths, extras)]
    reply = get_rewards(list(solution_strs), list(ground_truths), groups=groups)
    return [_details(reply, i) for i in range(len(solution_strs))]


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict) and part.get("type", "text") == "text")
    return str(content)


def _completion_text(completion):
    # Conversational: [{"role": "assistant", "content": …}]; standard: the text itself.
    if isinstance(completion, list):
        return "".join(_text(message.get("content", "")) for message in completion if isinstance(message, dict))
    return _text(completion)


def _prompt_key(prompt):
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)


def trl_reward(prompts, completions, label=None, **kwargs):
    """TRL GRPOTrainer reward function: `label` is the dataset's label column, one per completion.

    Returns the C-GRPO totals; logs the mean accuracy, format, contrast and full-group share
    through TRL's `log_metric` when it is given.
    """
    if label is None:
        raise ValueError("the dataset needs a 'label' column (eqa rm export grpo writes one)")
    texts = [_completion_text(c) for c in completions]
    groups = [_prompt_key(p) for p in prompts]
    reply = get_rewards(texts, list(label), groups=groups)
    log_metric = kwargs.get("log_metric")
    if callable(log_metric) and texts:
        logs = reply.get("extra_logs") or {}
        for name in ("accuracy_reward", "format_reward", "contrastive_reward", "full_group"):
            values = logs.get(name)
            if values:
                log_metric("eqa_rm/" + name, sum(values) / len(values))
    return [float(r) for r in reply["rewards"]]

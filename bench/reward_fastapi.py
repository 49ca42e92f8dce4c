"""The FastAPI anchor of the reward-server benchmark: OpenRLHF's remote reward protocol served by
FastAPI under uvicorn (one worker, as the usual example servers run), computing the same C-GRPO
rewards as `eqa rm serve` without grouping (Eqs. 3-5 over the request's batch; the score read as
eqakit reads it, in linear time).

Usage: python3 bench/reward_fastapi.py PORT   (needs fastapi and uvicorn: Debian's
python3-fastapi and python3-uvicorn, or pip). Prints "listening on http://127.0.0.1:PORT".
"""
import json
import re
import sys

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

VARIANTS = ["original", "temporal", "spatial", "reasoning"]
DELTA, MU, MIN_ACC = 0.95, 0.3, 0.1
SPECIAL = re.compile(r"<\|[^|<>]{1,40}\|>|</s>|<s>|<eos>|<end_of_turn>")
OPEN = re.compile(r"<\s*score\s*>", re.I)
CLOSE = re.compile(r"<\s*/\s*score\s*>", re.I)
CONTENT = re.compile(r"^(?:score\s*[:=]?\s*)?([-+]?\d+(?:\.\d+)?)(?:\s*(?:/|out\s+of)\s*10)?(?:\s*\.)?$", re.I)
WELL_SCORE = re.compile(r"^<score>\s*(\d+(?:\.\d+)?)\s*</score>$")


def score_contents(text):
    opens = [(m.start(), m.end()) for m in OPEN.finditer(text)]
    closes = [(m.start(), m.end()) for m in CLOSE.finditer(text)] if opens else []
    out, c, o = [], 0, 0
    while o < len(opens):
        start = opens[o][1]
        while c < len(closes) and closes[c][0] < start:
            c += 1
        nxt = opens[o + 1] if o + 1 < len(opens) else None
        if c < len(closes) and (nxt is None or closes[c][0] < nxt[0]):
            out.append(re.sub(r"\*\*|__|`", "", text[start:closes[c][0]]).strip())
            end = closes[c][1]
            while o < len(opens) and opens[o][0] < end:
                o += 1
        elif nxt is None:
            out.append(re.sub(r"\*\*|__|`", "", text[start:]).strip())
            break
        else:
            o += 1
    return out


def parse_score(text):
    for content in reversed(score_contents(text)):
        m = CONTENT.match(re.sub(r"^\[|\]$", "", content).strip())
        if m:
            s = float(m.group(1))
            return s if 0 <= s <= 10 else None
    return None


def well_formed(text):
    body = text.lstrip()
    if not body.startswith("<critique>"):
        return False
    end = body.find("</critique>", 10)
    if end == -1:
        return False
    critique = body[10:end]
    if "<critique>" in critique or "<score>" in critique or "</score>" in critique or not critique.strip():
        return False
    m = WELL_SCORE.match(body[end + 11:].strip())
    return bool(m) and 0 <= float(m.group(1)) <= 10


def rewards(items):
    base = []
    for variant, gt, text in items:
        s = parse_score(text)
        base.append((variant, s, 0.0 if s is None else max(0.0, 1 - (abs(s - gt) / 10) ** 2), 1.0 if well_formed(text) else 0.0))
    means = {}
    for v in VARIANTS:
        values = [b[2] for b in base if b[0] == v]
        means[v] = sum(values) / len(values) if values else None
    active = {x: means["original"] is not None and means[x] is not None and means["original"] >= DELTA * means[x] for x in VARIANTS[1:]}
    totals, boosts = [], []
    for variant, s, acc, fmt in base:
        boost = 0.0
        if variant == "original" and acc >= MIN_ACC:
            boost = sum(MU for x in VARIANTS[1:] if active[x]) / 3
        totals.append(acc + fmt + boost)
        boosts.append(boost)
    return base, totals, boosts


app = FastAPI()


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/get_reward")
async def get_reward(request: Request):
    body = await request.json()
    queries, prompts, labels = body["query"], body.get("prompts"), body["labels"]
    items = []
    for i, q in enumerate(queries):
        p = prompts[i] if prompts else ""
        out = q[len(p):] if p and q.startswith(p) else q
        label = labels[i].strip()
        if label.startswith("{"):
            record = json.loads(label)
            items.append((record.get("variant", "original"), float(record["score"]), SPECIAL.sub("", out).strip()))
        else:
            items.append(("original", float(label), SPECIAL.sub("", out).strip()))
    base, totals, boosts = rewards(items)
    return JSONResponse({
        "rewards": totals,
        "scores": [min(1.0, max(0.0, t / (2 + MU))) for t in totals],
        "extra_logs": {"accuracy_reward": [b[2] for b in base], "format_reward": [b[3] for b in base], "contrastive_reward": boosts, "parsed_score": [-1 if b[1] is None else b[1] for b in base]},
    })


if __name__ == "__main__":
    port = int(sys.argv[1])
    print("listening on http://127.0.0.1:%d" % port, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)

#!/usr/bin/python3
"""expr_test.py RULES PROM OUT [ALERT=SERIES...] - a promtool unit-test file
(JSON, which is YAML) that evaluates the expr of every alert of RULES over
the series of the exposition PROM, exactly as a command printed them.

The listed ALERT=SERIES pairs are what each alert's expr must select (the
sample of that series, with the value printed); every other alert must
select nothing.  ALERT={LABELS} (labels alone, no metric name) is a sample
absent() makes: those labels, value 1.  DcprobeRunStale is checked twice
over dcache-probe's timestamp series (the rule's selector): left at 0 (the
last run) for 40 minutes it selects each of them, with 2400 seconds;
advanced every minute (a run a minute) it selects none.  A pair naming a
series that PROM lacks is an error here, not a pass.
"""
import json
import re
import sys

rules, prom, out = sys.argv[1:4]
want = {}
for arg in sys.argv[4:]:
    alert, series = arg.split("=", 1)
    want.setdefault(alert, []).append(series)

exprs, alert = {}, None
for line in open(rules, encoding="utf-8"):
    m = re.match(r"\s*- alert: (\S+)\s*$", line)
    if m:
        alert = m.group(1)
    m = re.match(r"\s*expr: (.+?)\s*$", line)
    if m:
        exprs[alert] = m.group(1)
unknown = set(want) - set(exprs)
if unknown or "DcprobeRunStale" in want:
    sys.exit("expr_test.py: cannot expect %s" % sorted(unknown | ({"DcprobeRunStale"} & set(want))))

series = {}
for line in open(prom, encoding="utf-8"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    s, v = line.rsplit(" ", 1)
    series[s] = float(v)
stamps = [s for s in series if s.startswith("dcprobe_last_run_timestamp_seconds{")]
if not stamps:
    sys.exit("expr_test.py: %s has no dcprobe_last_run_timestamp_seconds" % prom)


def fmt(v):
    t = repr(v)
    return t if "e" not in t else "%.12f" % v


def group(stale):
    inputs = []
    for s, v in series.items():
        if s in stamps:
            values = "0x60" if stale else "0+60x60"
        else:
            values = "%sx60" % fmt(v)
        inputs.append({"series": s, "values": values})
    tests = []
    for alert, expr in exprs.items():
        if alert == "DcprobeRunStale":
            # time() - x drops the metric name.
            samples = [{"labels": s[s.index("{"):], "value": 2400} for s in stamps
                       if 'command="dcache-probe"' in s] if stale else []
        else:
            samples = [{"labels": s, "value": 1 if s.startswith("{") else series[s]}
                       for s in want.get(alert, [])]
        tests.append({"expr": expr, "eval_time": "40m", "exp_samples": samples})
    return {"interval": "1m", "input_series": inputs, "promql_expr_test": tests}


with open(out, "w", encoding="utf-8") as f:
    json.dump({"rule_files": [rules], "evaluation_interval": "1m",
               "tests": [group(True), group(False)]}, f, indent=1)

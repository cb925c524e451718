#!/usr/bin/python3
"""schema_check.py - every JSON record against man/dcprobe.schema.json.

  schema_check.py SCHEMA FILE...
      FILE is a log of one command's --json output, named SUITE.COMMAND.jsonl
      (tests/lib/fixture.sh writes them): every line must be UTF-8, one JSON
      object, valid under #/$defs/COMMAND of SCHEMA (JSON Schema 2020-12,
      checked with python3-jsonschema).  Prints every bad line (at most 20)
      and a count per command; exits 1 when a line is bad or there is none.
  schema_check.py SCHEMA --command COMMAND
      the lines of stdin, as records of COMMAND; exits 1 on the first bad one.
"""
import collections
import json
import os
import sys

import jsonschema


def validator(schema, command):
    if command not in schema["$defs"]:
        sys.exit("schema_check: no record types for command %r in the schema" % command)
    def make(ref):
        sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/" + ref}
        return jsonschema.Draft202012Validator(sub)
    v = make(command)
    v.by_type = collections.defaultdict(list)
    for name, d in schema["$defs"].items():
        if name.startswith(command + "."):
            t = d.get("properties", {}).get("type", {}).get("const")
            v.by_type[t].append(make(name))
    return v


def check_line(v, raw):
    """None when RAW (bytes) is a valid record, else why not."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return "not JSON: %s" % e
    errors = list(v.iter_errors(obj))
    if not errors:
        return None
    # Say why against the record types of the same "type", not "none of the
    # command's record types".
    for rv in v.by_type.get(obj.get("type") if isinstance(obj, dict) else None, []):
        errors = list(rv.iter_errors(obj))
        break
    else:
        return "no record type %r in this command" % (obj.get("type") if isinstance(obj, dict) else obj,)
    best = jsonschema.exceptions.best_match(errors)
    where = "/".join(str(p) for p in best.absolute_path)
    return "%s%s" % (where + ": " if where else "", best.message[:300])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    if sys.argv[2] == "--command":
        v = validator(schema, sys.argv[3])
        for n, raw in enumerate(sys.stdin.buffer, 1):
            why = check_line(v, raw.rstrip(b"\n"))
            if why:
                print("stdin:%d: %s: %r" % (n, why, raw[:300]))
                return 1
        return 0
    counts = collections.Counter()
    bad = 0
    vs = {}
    for path in sys.argv[2:]:
        command = os.path.basename(path).rsplit(".", 2)[-2]
        v = vs.setdefault(command, validator(schema, command))
        with open(path, "rb") as f:
            data = f.read()
        if data and not data.endswith(b"\n"):
            bad += 1
            print("%s: the last record has no newline" % path)
        for n, raw in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), 1):
            if not raw and not data:
                continue
            counts[command] += 1
            why = check_line(v, raw)
            if why:
                bad += 1
                if bad <= 20:
                    print("%s:%d: %s: %r" % (os.path.basename(path), n, why, raw[:300]))
    for command in sorted(counts):
        print("%s: %d records" % (command, counts[command]))
    if not sum(counts.values()):
        print("no records")
        return 1
    if bad:
        print("%d bad records" % bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

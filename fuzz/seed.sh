#!/usr/bin/env bash
# Seeds the fuzz corpora from Unleash's client specification and the benchmark workload:
# each file's state and each of its test contexts, joined by a NUL byte.
# Reads the copies vendored in crates/flag-eval/tests/data.
set -euo pipefail
cd "$(dirname "$0")"
vendored=../crates/flag-eval/tests/data
mkdir -p corpus/evaluate corpus/regex
python3 - "$vendored" <<'PY'
import json, pathlib, sys
vendored = pathlib.Path(sys.argv[1])
files = sorted((vendored / "client-specification").glob("[0-9]*.json")) + [vendored / "workload" / "micro.json"]
count = 0
for path in files:
    spec = json.loads(path.read_text())
    state = spec["state"]
    if "features" not in state:
        continue
    for index, case in enumerate((spec.get("tests") or []) + (spec.get("variantTests") or [])):
        data = json.dumps(state).encode() + b"\0" + json.dumps(case.get("context", {})).encode()
        (pathlib.Path("corpus/evaluate") / f"{path.stem}-{index}").write_bytes(data)
        count += 1
    for feature in state["features"]:
        for strategy in feature.get("strategies") or []:
            for constraint in strategy.get("constraints") or []:
                if constraint.get("operator") == "REGEX":
                    (pathlib.Path("corpus/regex") / f"{path.stem}-{count}").write_text(constraint["value"] + "\nuser123")
                    count += 1
print(f"{count} seeds")
PY

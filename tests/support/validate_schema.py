#!/usr/bin/python3
"""Validates documents against one of sitepatch's JSON Schemas (docs/schema/).

usage: validate_schema.py SCHEMA [--yaml] [FILE...]   (FILE "-" is standard input)

Checks SCHEMA itself against Draft 2020-12 (alone, without FILE), then prints each violation as "FILE: at PATH: MESSAGE" and exits 1 when there is one, 0 when
every file is valid. $refs to a sibling file (defs.json#/...) resolve in SCHEMA's folder,
as an editor resolves them. Needs python3-jsonschema (Draft 2020-12) and, for --yaml,
python3-yaml: the Debian 12 packages, so it runs with /usr/bin/python3.
"""
import json
import pathlib
import sys

import jsonschema


def load(path, as_yaml):
    text = sys.stdin.read() if path == "-" else pathlib.Path(path).read_text(encoding="utf-8")
    if as_yaml:
        import yaml
        return yaml.safe_load(text)
    return json.loads(text)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    schema_path = pathlib.Path(argv[1]).resolve()
    args = argv[2:]
    as_yaml = "--yaml" in args
    files = [a for a in args if a != "--yaml"]
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        print(f"{argv[1]}: not a valid Draft 2020-12 schema: {e.message}")
        return 1
    resolver = jsonschema.RefResolver(base_uri=schema_path.as_uri(), referrer=schema)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    bad = 0
    for f in files:
        try:
            doc = load(f, as_yaml)
        except Exception as e:  # a document that does not even parse is invalid too
            print(f"{f}: does not parse: {e}")
            bad += 1
            continue
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in err.absolute_path) or "(top)"
            print(f"{f}: at {where}: {err.message}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Checks yagrad IR JSON dumps (yg_graph_to_json) against
tools/ir_graph.schema.json, then checks by hand what a schema cannot say:
node ids are positions, edges join existing nodes and slots, each edge's
value is the name its source defines, every use has its edge, value names
are unique per graph (subgraphs included, each on its own).

Usage: check_ir_json.py SCHEMA DUMP.json...   exit 0 when all pass.
Uses the jsonschema package when installed (Debian: python3-jsonschema,
installed by scripts/install-deps.sh); otherwise a small validator for
the subset of JSON Schema the schema uses.
"""
import json
import re
import sys


def strict_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=strict_constant)


class Invalid(Exception):
    pass


def mini_validate(inst, schema, root, path="$"):
    """The keywords ir_graph.schema.json uses, nothing more."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        mini_validate(inst, target, root, path)
    if "const" in schema and inst != schema["const"]:
        raise Invalid(f"{path}: {inst!r} != {schema['const']!r}")
    if "enum" in schema and inst not in schema["enum"]:
        raise Invalid(f"{path}: {inst!r} not in {schema['enum']!r}")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        checks = {
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
        }
        if not any(checks[t](inst) for t in types):
            raise Invalid(f"{path}: {inst!r} is not {types}")
    if isinstance(inst, dict):
        for key in schema.get("required", []):
            if key not in inst:
                raise Invalid(f"{path}: missing {key}")
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            for key in inst:
                if key not in props:
                    raise Invalid(f"{path}: unexpected {key}")
        for key, sub in props.items():
            if key in inst:
                mini_validate(inst[key], sub, root, f"{path}.{key}")
    if isinstance(inst, list):
        if "maxItems" in schema and len(inst) > schema["maxItems"]:
            raise Invalid(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(inst):
                mini_validate(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(inst, str):
        if "pattern" in schema and not re.search(schema["pattern"], inst):
            raise Invalid(f"{path}: {inst!r} does not match {schema['pattern']}")
        if "minLength" in schema and len(inst) < schema["minLength"]:
            raise Invalid(f"{path}: shorter than {schema['minLength']}")
    if isinstance(inst, (int, float)) and not isinstance(inst, bool):
        if "minimum" in schema and inst < schema["minimum"]:
            raise Invalid(f"{path}: {inst} < {schema['minimum']}")
    if "oneOf" in schema:
        ok = 0
        for sub in schema["oneOf"]:
            try:
                mini_validate(inst, sub, root, path)
                ok += 1
            except Invalid:
                pass
        if ok != 1:
            raise Invalid(f"{path}: matches {ok} of oneOf")
    for sub in schema.get("allOf", []):
        if "if" in sub:
            try:
                mini_validate(inst, sub["if"], root, path)
            except Invalid:
                continue
            mini_validate(inst, sub["then"], root, path)
        else:
            mini_validate(inst, sub, root, path)


def check_graph(g, path="$"):
    """Hand checks of one graph and, recursively, its subgraphs."""
    names = {}
    for i, v in enumerate(g["inputs"]):
        names[v["name"]] = (-1, i)
    for pos, node in enumerate(g["nodes"]):
        if node["id"] != pos:
            raise Invalid(f"{path}.nodes[{pos}]: id {node['id']} is not its position")
        for i, v in enumerate(node["outputs"]):
            if v["name"] in names:
                raise Invalid(f"{path}: value {v['name']} defined twice")
            names[v["name"]] = (pos, i)
        for a in node["attributes"]:
            if a["kind"] == "graph":
                check_graph(a["value"], f"{path}.nodes[{pos}].{a['name']}")
    uses = set()
    for node in g["nodes"]:
        for i, name in enumerate(node["inputs"]):
            uses.add((name, node["id"], i))
    for i, name in enumerate(g["outputs"]):
        uses.add((name, -1, i))
    edges = set()
    for e in g["edges"]:
        src = names.get(e["value"])
        if src != (e["from"]["node"], e["from"]["index"]):
            raise Invalid(f"{path}: edge of {e['value']} starts at {e['from']}, defined at {src}")
        to = (e["value"], e["to"]["node"], e["to"]["index"])
        if to not in uses:
            raise Invalid(f"{path}: edge {to} is not a use")
        if to[1] >= 0 and src[0] >= to[1]:
            raise Invalid(f"{path}: edge {to} goes backwards")
        edges.add(to)
    if edges != uses:
        raise Invalid(f"{path}: uses without edges: {sorted(uses - edges)}")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = load(argv[1])
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    for path in argv[2:]:
        try:
            doc = load(path)
            if jsonschema is not None:
                try:
                    jsonschema.validate(doc, schema)
                except jsonschema.ValidationError as e:
                    raise Invalid(f"schema: {e.message} at {list(e.absolute_path)}")
            else:
                mini_validate(doc, schema, schema)
            check_graph(doc)
        except (Invalid, ValueError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
    print(f"ok: {len(argv) - 2} dump(s) valid"
          f" ({'jsonschema' if jsonschema else 'built-in validator'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

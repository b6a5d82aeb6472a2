"""Fan-out inputs: the items file, the task template, the result schema and its tool spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import FunctionTool

from corral.agents import CorralConfig
from corral.orchestrator.fanout import (
    FanoutInputError,
    ItemsFileError,
    ResultSchema,
    ResultSchemaError,
    ResultSlot,
    Template,
    TemplateError,
    parse_items,
    plan_fanout,
    read_items,
    report_result_tool,
    run_fanout,
)
from corral.orchestrator.runs import FanoutJob, JobInputError, RunSetup
from corral.tools import ToolRegistry

OBJECT_SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["n"],
}


def test_items_keep_the_line_they_came_from_and_blank_lines_are_skipped() -> None:
    items = parse_items('{"a": 1}\n\n  \n{"a": 2}\n', source="in.jsonl")
    assert [(i.index, i.line, i.data) for i in items] == [(0, 1, {"a": 1}), (1, 4, {"a": 2})]


def test_a_line_that_is_not_json_is_reported_with_its_number() -> None:
    with pytest.raises(ItemsFileError, match=r"in\.jsonl line 3: not valid JSON"):
        parse_items('{"a": 1}\n{"a": 2}\n{"a": \n{"a": 4}\n', source="in.jsonl")


def test_a_line_that_is_json_but_not_an_object_is_reported_with_its_kind() -> None:
    with pytest.raises(ItemsFileError, match=r"line 2: a JSON array, not an object"):
        parse_items('{"a": 1}\n[1, 2]\n', source="in.jsonl")


def test_a_missing_items_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ItemsFileError, match=r"nope\.jsonl does not exist"):
        read_items(tmp_path / "nope.jsonl")


def test_no_items_at_all_is_refused_before_anything_runs() -> None:
    with pytest.raises(FanoutInputError, match="no items"):
        plan_fanout(parse_items("\n\n"), "do {a}", OBJECT_SCHEMA)


def test_template_fills_fields_nested_fields_and_non_string_values() -> None:
    (item,) = parse_items('{"title": "Crash", "repo": {"name": "corral"}, "labels": ["bug"]}')
    template = Template("{title} in {repo.name}: {labels} / first {labels.0} / {repo}")
    assert template.fill(item) == 'Crash in corral: ["bug"] / first bug / {"name":"corral"}'
    assert template.fields == ["title", "repo.name", "labels", "labels.0", "repo"]


def test_doubled_braces_are_literal_braces() -> None:
    (item,) = parse_items('{"x": 1}')
    assert Template('{{"x": {x}}} and {{x}}').fill(item) == '{"x": 1} and {x}'


def test_a_field_missing_from_an_item_names_the_field_and_the_line() -> None:
    items = parse_items('{"title": "a"}\n\n{"body": "b"}\n', source="issues.jsonl")
    with pytest.raises(TemplateError) as caught:
        plan_fanout(items, "Fix {title}", OBJECT_SCHEMA)
    message = str(caught.value)
    assert "{title}" in message and "issues.jsonl line 3" in message and "item 1" in message


def test_a_lone_brace_is_a_template_error_with_its_position() -> None:
    with pytest.raises(TemplateError, match=r"lone '\}' at character 5"):
        Template("fix }it")
    with pytest.raises(TemplateError, match="empty field name"):
        Template("fix {} now")


def test_an_invalid_schema_is_refused_with_where_it_is_wrong() -> None:
    with pytest.raises(ResultSchemaError, match=r"not a valid JSON Schema: at \$\.type"):
        ResultSchema({"type": "objekt"})
    with pytest.raises(ResultSchemaError, match="a JSON list"):
        ResultSchema([{"type": "object"}])


def test_a_schema_file_that_is_not_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"type":\n  object}\n')
    with pytest.raises(ResultSchemaError, match=r"schema\.json is not valid JSON: .* line 2"):
        ResultSchema.load(path)


def test_validation_problems_name_the_path_and_the_message() -> None:
    schema = ResultSchema(OBJECT_SCHEMA)
    assert schema.problems({"n": 1, "tags": ["a"]}) == []
    assert schema.problems({"n": "one", "tags": ["a", 2]}) == [
        "$.n: 'one' is not of type 'integer'",
        "$.tags[1]: 2 is not of type 'string'",
    ]


def test_an_object_schema_is_the_tool_parameters_as_is_and_not_strict() -> None:
    schema = ResultSchema(OBJECT_SCHEMA)
    slot = ResultSlot(index=0, schema=schema, max_tries=3)
    (spec,) = ToolRegistry([report_result_tool(slot)]).responses_tools()
    tool = FunctionTool.model_validate(spec)
    assert tool.name == "report_result" and tool.strict is False
    assert spec["parameters"] == OBJECT_SCHEMA and not schema.wrapped


def test_a_non_object_schema_is_wrapped_as_result_with_its_defs_hoisted() -> None:
    raw: dict[str, Any] = {
        "$defs": {"label": {"type": "string", "enum": ["bug", "feature"]}},
        "type": "array",
        "items": {"$ref": "#/$defs/label"},
    }
    schema = ResultSchema(raw)
    assert schema.wrapped
    assert schema.parameters["required"] == ["result"]
    assert schema.parameters["$defs"] == raw["$defs"]
    assert schema.problems({"result": ["bug"]}) == []
    assert schema.problems({"result": ["nope"]}) == [
        "$.result[0]: 'nope' is not one of ['bug', 'feature']"
    ]
    assert schema.result_of({"result": ["bug"]}) == ["bug"]


def test_a_slot_counts_invalid_results_and_refuses_after_the_last_try() -> None:
    slot = ResultSlot(index=4, schema=ResultSchema(OBJECT_SCHEMA), max_tries=2)
    first = slot.judge({"n": "x"})
    assert not first.success and "(1 of 2 tries)" in first.text and "$.n" in first.text
    last = slot.judge({})
    assert not last.success and "last try" in last.text
    refused = slot.judge({"n": 1})
    assert not refused.success and not slot.has_result
    assert slot.failure("completed", None) == "2 invalid results: $: 'n' is a required property"


def test_a_slot_keeps_the_first_valid_result() -> None:
    slot = ResultSlot(index=0, schema=ResultSchema(OBJECT_SCHEMA), max_tries=3)
    assert slot.judge({"n": 1}).text == "result recorded"
    again = slot.judge({"n": 2})
    assert not again.success and slot.result == {"n": 1}


def test_items_given_as_plain_mappings_are_numbered_from_one() -> None:
    plan = plan_fanout([{"a": 1}, {"a": 2}], "task {a}", OBJECT_SCHEMA)
    assert plan.tasks == ("task 1", "task 2")
    assert [item.line for item in plan.items] == [1, 2]
    assert json.dumps(plan.schema.parameters) == json.dumps(OBJECT_SCHEMA)


def test_an_item_json_cannot_store_is_refused_with_its_line() -> None:
    items = parse_items('{"a": 1}\n{"a": NaN}\n', source="in.jsonl")
    with pytest.raises(ItemsFileError, match=r"item 1 \(in\.jsonl line 2\) cannot be stored"):
        plan_fanout(items, "task {a}", OBJECT_SCHEMA)


@pytest.mark.anyio
async def test_a_concurrency_below_one_is_refused_before_anything_is_journaled(
    tmp_path: Path,
) -> None:
    config = CorralConfig(home=tmp_path / "home", base_url="http://127.0.0.1:9/v1")
    # The job refuses it when it is made, before any executor sees it.
    with pytest.raises(JobInputError, match="concurrency must be at least 1, not 0"):
        await run_fanout(
            config,
            FanoutJob(
                items=tuple([{"a": 1}]),
                template="{a}",
                result_schema=OBJECT_SCHEMA,
                cwd=tmp_path,
                concurrency=0,
            ),
            RunSetup(),
        )
    assert not (tmp_path / "home").exists()

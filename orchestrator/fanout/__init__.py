"""Deterministic batch fan-out: one worker per item, each handing in a schema-checked result.

`run_fanout` fills a task template from each item, runs the workers (at most `concurrency` at
once) as top-level agents of one journaled run, and collects what each reported through its
`report_result` tool; `resume_fanout` carries a stopped run on from its id alone. Inputs are
checked before anything runs: `read_items`, `Template` and `ResultSchema` say what is wrong.
"""

from ..runs import DEFAULT_MAX_RESULT_TRIES as DEFAULT_MAX_RESULT_TRIES
from ..runs import StartCallback as StartCallback
from ._errors import FanoutInputError as FanoutInputError
from ._errors import ItemsFileError as ItemsFileError
from ._errors import NotAFanoutRun as NotAFanoutRun
from ._errors import ResultSchemaError as ResultSchemaError
from ._errors import TemplateError as TemplateError
from ._fanout import FANOUT as FANOUT
from ._fanout import find_fanout_run as find_fanout_run
from ._fanout import resume_fanout as resume_fanout
from ._fanout import run_fanout as run_fanout
from ._items import FanoutItem as FanoutItem
from ._items import parse_items as parse_items
from ._items import read_items as read_items
from ._outcome import FanoutOutcome as FanoutOutcome
from ._outcome import ItemOutcome as ItemOutcome
from ._plan import STDOUT as STDOUT
from ._plan import FanoutPlan as FanoutPlan
from ._plan import FanoutSettings as FanoutSettings
from ._plan import plan_fanout as plan_fanout
from ._report import REPORT_RESULT as REPORT_RESULT
from ._report import RESULT_RECORDED as RESULT_RECORDED
from ._report import ResultSlot as ResultSlot
from ._report import report_result_tool as report_result_tool
from ._schema import ResultSchema as ResultSchema
from ._template import Template as Template

__all__ = [
    "DEFAULT_MAX_RESULT_TRIES",
    "FANOUT",
    "REPORT_RESULT",
    "RESULT_RECORDED",
    "STDOUT",
    "FanoutInputError",
    "FanoutItem",
    "FanoutOutcome",
    "FanoutPlan",
    "FanoutSettings",
    "ItemOutcome",
    "ItemsFileError",
    "NotAFanoutRun",
    "ResultSchema",
    "ResultSchemaError",
    "ResultSlot",
    "StartCallback",
    "Template",
    "TemplateError",
    "find_fanout_run",
    "parse_items",
    "plan_fanout",
    "read_items",
    "report_result_tool",
    "resume_fanout",
    "run_fanout",
]

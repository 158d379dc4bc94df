#!/usr/bin/python3
"""Writes tests/text/data/chat_template_golden.json: chat-template renders by Jinja2 itself, configured as
transformers configures it (transformers/utils/chat_template_utils.py, _cached_compile_jinja_template):

    ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                  extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    filters["tojson"] = json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...)
    globals["raise_exception"] raises TemplateError(message); globals["strftime_now"] = datetime.now().strftime

rendered as render_jinja_template renders (messages, tools, documents, add_generation_prompt, then the
special tokens and the caller's kwargs), with the generation spans as _render_with_assistant_indices records
them. The one change: strftime_now reads a fixed clock (FIXED_NOW), so the goldens do not depend on the day;
the C++ test sets the same clock.

Inputs: the real templates in tests/text/data/chat_templates/*.jinja (see the README there) crossed with the
conversations below, plus adversarial templates written here. Run from the repository root:

    /usr/bin/python3 tests/text/tools/make_chat_template_golden.py

with Debian's python3-jinja2 (the reference; scripts/install-deps.sh installs it). The Jinja2 and Python
versions are recorded in the output; Jinja2 3.1.6 under another Python gives the same file but for them.
"""

import argparse
import datetime
import json
import os
import sys
import traceback

import jinja2
import jinja2.exceptions
import jinja2.ext
import jinja2.nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

FIXED_NOW = datetime.datetime(2025, 3, 7, 9, 5, 3)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA = os.path.join(ROOT, "tests", "text", "data")


def make_env():
    class AssistantTracker(Extension):
        tags = {"generation"}

        def __init__(self, environment):
            super().__init__(environment)
            environment.extend(activate_tracker=self.activate_tracker)
            self._rendered_blocks = None
            self._generation_indices = None

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

        @jinja2.pass_eval_context
        def _generation_support(self, context, caller):
            rv = caller()
            if self.is_active():
                start_index = len("".join(self._rendered_blocks))
                end_index = start_index + len(rv)
                self._generation_indices.append((start_index, end_index))
            return rv

        def is_active(self):
            return self._rendered_blocks is not None or self._generation_indices is not None

        def activate_tracker(self, rendered_blocks, generation_indices):
            self._rendered_blocks = rendered_blocks
            self._generation_indices = generation_indices

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_NOW.strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def template_line(exc):
    """The template line Jinja2 attributes an error to: a syntax error's lineno, else the last traceback frame
    that Jinja2 rewrote to point into the template."""
    if isinstance(exc, jinja2.exceptions.TemplateSyntaxError):
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render(env, source, ctx):
    """{"text", "generation"} or {"error", "error_type", "line"}."""
    try:
        compiled = env.from_string(source)
        blocks, spans = [], []
        env.activate_tracker(blocks, spans)
        kwargs = dict(ctx.get("special_tokens", {}))
        kwargs.update(ctx.get("kwargs", {}))
        for block in compiled.generate(
            messages=ctx["messages"],
            tools=ctx.get("tools"),
            documents=ctx.get("documents"),
            add_generation_prompt=ctx.get("add_generation_prompt", False),
            **kwargs,
        ):
            blocks.append(block)
        return {"text": "".join(blocks), "generation": [list(s) for s in spans]}
    except Exception as e:  # noqa: BLE001 - every failure is a golden outcome
        return {
            "error": str(e),
            "error_type": type(e).__name__,
            # raise_exception's message is the one the C++ engine must repeat verbatim.
            "raised": type(e) is jinja2.exceptions.TemplateError,
            "line": template_line(e),
        }


# ---- conversations for the real templates --------------------------------------------------------------------

QWEN_SPECIAL = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
LLAMA_SPECIAL = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
GEMMA_SPECIAL = {"bos_token": "<bos>", "eos_token": "<end_of_turn>", "pad_token": "<pad>", "unk_token": "<unk>"}
SMOL_SPECIAL = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|im_end|>"}
GPTOSS_SPECIAL = {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"}
PHI_SPECIAL = {"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>"}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone (naïve → aware)",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
    },
}

CONVERSATIONS = {
    "single_user": {"messages": [{"role": "user", "content": "Hello!"}]},
    "system_user_assistant": {
        "messages": [
            {"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris."},
        ]
    },
    "multi_turn_system": {
        "messages": [
            {"role": "system", "content": "You answer in one word."},
            {"role": "user", "content": "Sky colour?"},
            {"role": "assistant", "content": "Blue."},
            {"role": "user", "content": "Grass colour?"},
            {"role": "assistant", "content": "Green."},
            {"role": "user", "content": "Snow colour?"},
        ]
    },
    "multi_turn_no_system": {
        "messages": [
            {"role": "user", "content": "Count to three."},
            {"role": "assistant", "content": "1, 2, 3"},
            {"role": "user", "content": "Now backwards."},
            {"role": "assistant", "content": "3, 2, 1"},
        ]
    },
    "unicode_and_whitespace": {
        "messages": [
            {"role": "system", "content": "  Réponds en français. \n"},
            {"role": "user", "content": "\u3000東京の天気は？ 🌧️ naïve café — “quotes” 'single' \"double\" back\\slash\n\n"},
            {"role": "assistant", "content": "\t晴れです。\u00a0Ça va ? 👍🏽 Zero\u200bwidth\n"},
            {"role": "user", "content": "e\u0301 (combining) and ß and İ"},
        ]
    },
    "empty_contents": {
        "messages": [
            {"role": "system", "content": ""},
            {"role": "user", "content": ""},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": " "},
        ]
    },
    "special_characters": {
        "messages": [
            {"role": "user", "content": "{{ not a template }} {% neither %} {# nor #} <|im_end|> </s> <end_of_turn>"},
            {"role": "assistant", "content": "JSON: {\"a\": [1, 2.5, null, true]}\nLine2\r\nLine3"},
        ]
    },
    "tool_call_dict_args": {
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "messages": [
            {"role": "system", "content": "You can call tools."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
                ],
            },
            {"role": "tool", "name": "get_weather", "content": "{\"temperature\": 21.5, \"sky\": \"clear\"}"},
            {"role": "assistant", "content": "It is 21.5 °C and clear in Paris."},
        ],
    },
    "tool_call_no_system": {
        "tools": [WEATHER_TOOL],
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
            },
            {"role": "tool", "content": "-3 and snowing"},
        ],
    },
    "tool_call_string_args": {
        "tools": [WEATHER_TOOL],
        "messages": [
            {"role": "user", "content": "Weather in Rome?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    },
    "parallel_tool_calls": {
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "messages": [
            {"role": "user", "content": "Weather and time in Tokyo?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
                    {"type": "function", "function": {"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}}},
                ],
            },
            {"role": "tool", "content": "rain"},
            {"role": "tool", "content": "18:00"},
        ],
    },
    "tools_only_user": {"tools": [WEATHER_TOOL], "messages": [{"role": "user", "content": "Any tools?"}]},
    "thinking_reasoning_content": {
        "messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "reasoning_content": "Two plus two is four.", "content": "4"},
            {"role": "user", "content": "3+3?"},
            {"role": "assistant", "reasoning_content": "Three and three make six.", "content": "6"},
        ]
    },
    "thinking_in_content": {
        "messages": [
            {"role": "user", "content": "Why?"},
            {"role": "assistant", "content": "<think>\nBecause it is.\n</think>\n\nBecause."},
            {"role": "user", "content": "Really?"},
        ]
    },
    "thinking_field": {
        "messages": [
            {"role": "user", "content": "Plan a trip."},
            {"role": "assistant", "thinking": "Consider budget first.", "content": "Go to Lisbon."},
        ]
    },
    "content_parts": {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Describe images."}]},
            {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is this?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
        ]
    },
    "roles_not_alternating": {
        "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    },
    "unknown_role": {"messages": [{"role": "narrator", "content": "Once upon a time"}]},
    "developer_role": {
        "messages": [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    },
}

# (conversation, add_generation_prompt, kwargs) variations every real template gets.
VARIANTS = [
    ("single_user", True, {}),
    ("single_user", False, {}),
    ("system_user_assistant", False, {}),
    ("system_user_assistant", True, {}),
    ("multi_turn_system", True, {}),
    ("multi_turn_no_system", False, {}),
    ("unicode_and_whitespace", True, {}),
    ("empty_contents", True, {}),
    ("special_characters", False, {}),
    ("tool_call_dict_args", False, {}),
    ("tool_call_no_system", True, {}),
    ("tool_call_string_args", True, {}),
    ("parallel_tool_calls", True, {}),
    ("tools_only_user", True, {}),
    ("thinking_reasoning_content", False, {}),
    ("thinking_in_content", True, {}),
    ("thinking_field", False, {}),
    ("content_parts", True, {}),
    ("roles_not_alternating", True, {}),
    ("unknown_role", True, {}),
    ("developer_role", True, {}),
]

# Family-specific switches on top of the variants.
EXTRA_VARIANTS = {
    "qwen3": [("single_user", True, {"enable_thinking": False}), ("multi_turn_system", True, {"enable_thinking": True}),
              ("thinking_reasoning_content", True, {"enable_thinking": False})],
    "qwen3_npm": [("single_user", True, {"enable_thinking": False})],
    "qwen3_training": [("single_user", True, {"enable_thinking": False}),
                       ("thinking_reasoning_content", False, {"enable_thinking": False})],
    "qwen3_5_think": [("single_user", True, {"enable_thinking": False}),
                      ("thinking_reasoning_content", True, {"enable_thinking": False})],
    "llama3_1": [("system_user_assistant", True, {"date_string": "01 Jan 2025"}),
                 ("tools_only_user", True, {"tools_in_user_message": False}),
                 ("tool_call_dict_args", True, {"builtin_tools": ["brave_search", "wolfram_alpha"]})],
    "llama3_2": [("system_user_assistant", True, {"date_string": "01 Jan 2025"}),
                 ("tools_only_user", True, {"tools_in_user_message": False})],
    "gptoss": [("single_user", True, {"reasoning_effort": "high"}),
               ("thinking_field", True, {"model_identity": "You are Otto."})],
}

SPECIAL_BY_FAMILY = [
    ("qwen", QWEN_SPECIAL),
    ("llama", LLAMA_SPECIAL),
    ("gemma", GEMMA_SPECIAL),
    ("smollm", SMOL_SPECIAL),
    ("gptoss", GPTOSS_SPECIAL),
    ("phi", PHI_SPECIAL),
]


def special_for(name):
    for prefix, special in SPECIAL_BY_FAMILY:
        if name.startswith(prefix):
            return special
    return {}


# ---- adversarial templates -----------------------------------------------------------------------------------

MSGS = [
    {"role": "system", "content": "  sys  "},
    {"role": "user", "content": "Hi\u3000"},
    {"role": "assistant", "content": "Yo"},
]

ADVERSARIAL = [
    # whitespace control, trim_blocks and lstrip_blocks
    ("ws_trim_blocks", "{% if true %}\nA\n{% endif %}\nB\n", {}),
    ("ws_lstrip_blocks", "x\n    {% if true %}\n    y\n    {% endif %}\nz", {}),
    ("ws_lstrip_not_vars", "    {{ 'v' }}\n  {# c #}\nw", {}),
    ("ws_minus_both", "a   \n  {%- if true -%}   \n  b  \n  {%- endif -%}  \n c", {}),
    ("ws_plus_disables", "a\n  {%+ if true +%}\nb\n{%+ endif %}\nc", {}),
    ("ws_var_minus", "a  \n {{- 'x' -}} \n  b", {}),
    ("ws_comment_minus", "a \n{#- comment -#}\n b", {}),
    ("ws_trailing_newline_dropped", "line\n", {}),
    ("ws_crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", {}),
    ("ws_raw", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}\n{%- raw -%}  x  {%- endraw %}", {}),
    ("ws_midline_tag_keeps_indent", "a  {% if true %}b{% endif %}  c\n  {% if true %}d{% endif %}", {}),
    ("ws_unicode_rstrip", "a\u3000\u00a0 {{- 'b' }}", {}),
    # loops
    ("loop_vars",
     "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}"
     "/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}/{{ loop.previtem.role if not loop.first }}"
     "/{{ loop.nextitem.role if not loop.last }}/{{ loop.depth }}|{% endfor %}", {"messages": MSGS}),
    ("loop_nested",
     "{% for i in range(3) %}{% for j in range(i) %}{{ i }}{{ j }}{{ loop.index }},{% endfor %};{{ loop.index }}\n{% endfor %}",
     {}),
    ("loop_filter_else",
     "{% for m in messages if m.role != 'system' %}{{ m.role }}{{ loop.length }}{% else %}none{% endfor %}"
     "{% for x in [] %}x{% else %}empty{% endfor %}", {"messages": MSGS}),
    ("loop_break_continue",
     "{% for i in range(10) %}{% if i is odd %}{% continue %}{% endif %}{% if i > 6 %}{% break %}{% endif %}{{ i }}{% endfor %}",
     {}),
    ("loop_cycle_changed",
     "{% for i in [1,1,2,3,3] %}{{ loop.cycle('a','b','c') }}{% if loop.changed(i) %}!{% endif %}{% endfor %}", {}),
    ("loop_unpack_items",
     "{% for k, v in {'b': 1, 'a': [1, 2], 'c': {'d': none}}|items %}{{ k }}={{ v }};{% endfor %}"
     "{% for k, v in {'x': 1}.items() %}{{ k }}{{ v }}{% endfor %}", {}),
    ("loop_scope_does_not_leak",
     "{% set x = 'outer' %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("loop_recursive",
     "{% for n in tree recursive %}[{{ n.name }}{% if n.children %}{{ loop(n.children) }}{% endif %}]{% endfor %}",
     {"kwargs": {"tree": [{"name": "a", "children": [{"name": "b", "children": []}, {"name": "c"}]}, {"name": "d"}]}}),
    ("loop_over_string_and_dict", "{% for c in 'héé' %}{{ c }}.{% endfor %}{% for k in {'z': 1, 'y': 2} %}{{ k }}{% endfor %}", {}),
    # namespaces and scoping
    ("namespace_counter",
     "{% set ns = namespace(n=0, last=none) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% set ns.last = m.role %}{% endfor %}"
     "{{ ns.n }} {{ ns.last }}", {"messages": MSGS}),
    ("namespace_find_last_user",
     "{% set ns = namespace(idx=-1) %}{% for m in messages[::-1] %}{% if ns.idx == -1 and m.role == 'user' %}"
     "{% set ns.idx = messages|length - 1 - loop.index0 %}{% endif %}{% endfor %}{{ ns.idx }}", {"messages": MSGS}),
    ("if_set_visible_after", "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    ("set_block", "{% set body %}  Hello {{ name }}  {% endset %}[{{ body }}]{% set up | upper | trim %} q {% endset %}[{{ up }}]",
     {"kwargs": {"name": "Ann"}}),
    ("set_tuple", "{% set a, b = 1, 'two' %}{{ a }}{{ b }}{% set t = (1,) %}{{ t }}{{ (1, 2) }}", {}),
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", {}),
    # macros
    ("macro_defaults_kwargs",
     "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{{ varargs|length }}{{ kwargs|length }}{% endmacro %}"
     "{{ greet('A') }} {{ greet('B', '?') }} {{ greet(name='C', punct='.') }} {{ greet('D', '!', 3, x=4) }}", {}),
    ("macro_reads_outer_at_call",
     "{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}", {}),
    ("macro_recursive",
     "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n }}*{{ fact(n - 1) }}{% endif %}{% endmacro %}{{ fact(5) }}", {}),
    ("macro_call_block",
     "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %}", {}),
    ("filter_block", "{% filter upper %}shout {{ 'this' }}{% endfilter %}", {}),
    # filters
    ("filters_strings",
     "{{ '  pad  '|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'Hello World'|upper }}|{{ 'Hello World'|lower }}|"
     "{{ 'hello wORLD-foo(bar)'|title }}|{{ 'hELLO wORLD'|capitalize }}|{{ 'aaa'|replace('a', 'b', 2) }}|"
     "{{ 'x'|center(7) }}|{{ 'abc'|length }}|{{ 'naïve'|count }}|{{ 'a b  c'|wordcount }}|{{ '<a&\"\\'>'|e }}", {}),
    ("filters_truncate",
     "{{ 'The quick brown fox jumps over the lazy dog'|truncate(20) }}|{{ 'The quick brown fox'|truncate(9, true) }}|"
     "{{ 'short'|truncate(3, leeway=0, end='') }}|{{ 'abcdefghijklmnop'|truncate(10, false, '~', 0) }}", {}),
    ("filters_lists",
     "{{ [3, 1, 2]|sort }}|{{ ['b', 'A', 'c']|sort }}|{{ ['b', 'A', 'c']|sort(case_sensitive=true) }}|{{ [1, 2]|sort(reverse=true) }}|"
     "{{ [1, 2, 3]|first }}|{{ [1, 2, 3]|last }}|{{ [1, 2, 3]|join('-') }}|{{ [1, 2, 3]|sum }}|{{ [3, 1]|min }}|{{ [3, 1]|max }}|"
     "{{ [1, 1, 2]|unique|list }}|{{ 'abc'|list }}|{{ [1, 2, 3]|reverse|list }}|{{ 'abc'|reverse }}|{{ [1, 2, 3, 4, 5]|batch(2)|list }}|"
     "{{ []|first is undefined }}", {}),
    ("filters_select_map",
     "{{ messages|map(attribute='role')|join(',') }}|{{ messages|selectattr('role', 'equalto', 'user')|list|length }}|"
     "{{ messages|rejectattr('role', 'in', ['system'])|map(attribute='content')|join('/') }}|"
     "{{ [0, 1, 2, '', none, 'x']|select|list }}|{{ [1, 2, 3, 4]|reject('odd')|list }}|{{ ['a', 'B']|map('upper')|list }}|"
     "{{ messages|selectattr('name', 'defined')|list|length }}|{{ messages|map(attribute='name', default='?')|join }}",
     {"messages": MSGS}),
    ("filters_default",
     "{{ missing|default('d') }}|{{ ''|default('e') }}|{{ ''|default('e', true) }}|{{ none|default('n') }}|{{ none|d('n', boolean=true) }}",
     {}),
    ("filters_numbers",
     "{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.675|round(2) }}|{{ 2.1|round(0, 'ceil') }}|{{ 2.9|round(0, 'floor') }}|{{ 7|round }}|"
     "{{ '42'|int }}|{{ '42.7'|int }}|{{ 'x'|int(5) }}|{{ '0x1A'|int(0, 16) }}|{{ '3.25'|float }}|{{ 'y'|float }}|{{ -3|abs }}|"
     "{{ 3.0|int }}|{{ 10|float }}|{{ '%05.2f|%d|%s|%r|%x'|format(3.14159, 42, 'str', 'r', 255) }}|{{ '%(a)s-%(b)s'|format(a=1, b=2) }}",
     {}),
    ("filters_dicts",
     "{{ {'b': 2, 'a': 1}|dictsort }}|{{ {'b': 2, 'a': 1}|dictsort(by='value', reverse=true) }}|{{ {'a': 1}|items|list }}|"
     "{{ {'x': 1}|length }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d.get('a') }}|{{ d.get('zz', 'fallback') }}|{{ d.get('zz') }}|"
     "{{ d|attr('items') is defined }}|{{ d['items'] }}", {"kwargs": {"d": {"a": 1, "items": "key-wins-for-subscript"}}}),
    ("filters_indent",
     "{{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent('>>', blank=true) }}", {}),
    ("filters_groupby",
     "{% for g in people|groupby('city') %}{{ g.grouper }}:{{ g.list|map(attribute='name')|join(',') }};{% endfor %}"
     "{% for city, ps in people|groupby('city') %}{{ city }}{{ ps|length }}{% endfor %}",
     {"kwargs": {"people": [{"name": "a", "city": "Oslo"}, {"name": "b", "city": "Bern"}, {"name": "c", "city": "Oslo"}]}}),
    ("tojson_forms",
     "{{ d|tojson }}\n{{ d|tojson(indent=2) }}\n{{ d|tojson(indent=4, sort_keys=true) }}\n{{ d|tojson(separators=(',', ':')) }}\n"
     "{{ d|tojson(ensure_ascii=true) }}\n{{ [] |tojson(indent=2) }}{{ {}|tojson(indent=2) }}\n{{ 'a\"b\\\\c\n\t\u0001'|tojson }}\n"
     "{{ (1, 2)|tojson }}{{ 1e100|tojson }}{{ 0.1|tojson }}{{ -0.0|tojson }}",
     {"kwargs": {"d": {"zeta": [1, 2.5, None, True, False], "alpha": {"nested": "日本語 🎉"}, "": "empty key", "n": -7}}}),
    # strings and methods
    ("str_methods",
     "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.strip(' h') }}|{{ s.split() }}|{{ 'a,b,,c'.split(',') }}|"
     "{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ s.startswith('  he') }}|{{ s.endswith(('x', 'd  ')) }}|"
     "{{ 'Hello'.replace('l', 'L') }}|{{ 'hello world'.title() }}|{{ \"they're\".title() }}|{{ 'abc'.upper() }}|{{ 'ABC'.lower() }}|"
     "{{ 'a-b'.find('-') }}|{{ 'aXbXc'.count('X') }}|{{ '-'.join(['x', 'y']) }}|{{ 'l1\\nl2\\r\\nl3'.splitlines() }}|"
     "{{ '{} and {:>5} and {name!r} {:.3f} {:,}'.format(1.5, 'r', 2.0, 1234567, name='n') }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '5'.zfill(3) }}|{{ 'ab'.ljust(4, '*') }}|"
     "{{ 'abc'.isalpha() }}{{ '12'.isdigit() }}{{ ' '.isspace() }}{{ 'ab'.islower() }}|{{ 'x=y'.partition('=') }}",
     {"kwargs": {"s": "  hello world  "}}),
    ("str_slicing",
     "{{ s[::-1] }}|{{ s[1:3] }}|{{ s[-2:] }}|{{ s[:-1] }}|{{ s[::2] }}|{{ s[0] }}|{{ s[-1] }}|{{ l[1:] }}|{{ l[::-1] }}|"
     "{{ l[-1] }}|{{ l[10] is undefined }}|{{ s[5:1:-1] }}|{{ l[:] }}", {"kwargs": {"s": "añb日c", "l": [1, 2, 3]}}),
    ("str_unicode_strip", "[{{ s|trim }}][{{ s.strip() }}][{{ s.split() }}][{{ s|length }}]",
     {"kwargs": {"s": "\u3000\u2003 x\u00a0y \u2028\u3000"}}),
    # operators and printing
    ("operators_arith",
     "{{ 1 + 2 }} {{ 7 - 10 }} {{ 2 * 3.5 }} {{ 7 / 2 }} {{ 8 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 % 2 }} "
     "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ true + 1 }} {{ 0.1 + 0.2 }} {{ 1e16 }} "
     "{{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 100.0 }} {{ 1/3 }} {{ -0.0 }} {{ 2 * 10 ** 15 }} {{ 123456789.0 * 10 }}", {}),
    ("operators_printing",
     "{{ none }} {{ true }} {{ false }} {{ [1, 'a', none, true, 2.50, [\"it's\"]] }} {{ {'k': 'v', 1: none} }} "
     "{{ ('x',) }} {{ 'q\"uote' }} {{ ['a\"b', \"c'd\", 'e\\'f\"g', '\\n\\t'] }} {{ missing }}|", {}),
    ("operators_concat_compare",
     "{{ 'a' ~ 1 ~ none ~ true }} {{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} "
     "{{ 3 > 2 > 2 }} {{ 'b' in 'abc' }} {{ 'x' not in ['y'] }} {{ 'k' in {'k': 1} }} {{ not 0 }} {{ none or 'x' }} "
     "{{ 0 and 'y' }} {{ 'yes' if 1 else 'no' }} {{ 'no' if 0 }}| {{ 1 != 1 }} {{ [] == [] }}", {}),
    ("literals",
     "{{ 'multi\nline' }}|{{ \"esc\\x41\\u00e9\\U0001F600\\101\" }}|{{ 'unknown\\d' }}|{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|"
     "{{ 1_000 }}|{{ 1.5e3 }}|{{ 'a' 'b' }}|{{ [1, 2,] }}|{{ {'a': 1,} }}", {}),
    # tests
    ("tests_is",
     "{{ x is defined }}{{ y is defined }}{{ y is undefined }}{{ n is none }}{{ n is not none }}{{ s is string }}{{ 1 is string }}"
     "{{ d is mapping }}{{ l is mapping }}{{ l is iterable }}{{ s is iterable }}{{ 1 is number }}{{ 1.5 is float }}{{ 1 is integer }}"
     "{{ true is boolean }}{{ true is true }}{{ false is false }}{{ 0 is false }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}"
     "{{ 9 is divisibleby(4) }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ 2 is eq 2 }}{{ 2 is ne 3 }}{{ 1 is lt 2 }}{{ 2 is ge 2 }}"
     "{{ 'a' is in 'abc' }}{{ n is sameas none }}{{ l is sequence }}{{ range is callable }}{{ 'upper' is filter }}{{ 'odd' is test }}",
     {"kwargs": {"x": 1, "n": None, "s": "s", "d": {}, "l": []}}),
    ("attr_vs_item",
     "{{ m.items is defined }} {{ m['items'] }} {{ m.content }} {{ m['content'] }} {{ m.missing is defined }} {{ m.get('content') }}",
     {"kwargs": {"m": {"content": "c", "items": "i"}}}),
    ("undefined_semantics",
     "[{{ u }}][{{ u|length }}][{{ u|default('d') }}][{{ u is defined }}][{% for x in u %}x{% endfor %}][{{ u ~ 'a' }}]"
     "[{{ d.nokey }}][{{ d.nokey is defined }}][{{ [1][5] }}][{{ none.x }}][{{ 'no' if u }}][{{ u == u }}]",
     {"kwargs": {"d": {}}}),
    ("generation_tags",
     "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}</s>{% endgeneration %}"
     "{% else %}{{ m.content }}{% endif %}\n{% endfor %}{% generation %}{% endgeneration %}", {"messages": MSGS + [
         {"role": "user", "content": "日本"}, {"role": "assistant", "content": "é👍"}]}),
    ("generation_in_macro",
     "{% macro turn(m) %}[{% generation %}{{ m.content }}{% endgeneration %}]{% endmacro %}ab{{ turn(messages[2]) }}{{ turn(messages[1]) }}",
     {"messages": MSGS}),
    ("strftime_now_formats", "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%dT%H:%M:%S') }}|{{ strftime_now('%A %B %j %%') }}", {}),
    ("dict_and_range_globals",
     "{{ dict(a=1, b=2) }}{{ range(3)|list }}{{ range(1, 10, 3)|list }}{{ range(5, 0, -2)|list }}{% set j = joiner('+') %}"
     "{% for i in range(3) %}{{ j() }}{{ i }}{% endfor %}", {}),
    ("special_tokens_in_context", "{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token is defined }}|{{ add_generation_prompt }}|{{ tools }}|{{ documents }}",
     {"special_tokens": {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}}),
    ("kwargs_override_special", "{{ eos_token }}", {"special_tokens": {"eos_token": "</s>"}, "kwargs": {"eos_token": "<override>"}}),
    ("str_split_maxsplit_remainder",
     "{{ '  a  b  '.split(none, 1) }}{{ '  a  b  '.rsplit(none, 1) }}{{ 'a b c'.split(' ', -1) }}{{ ''.split() }}{{ ''.split(',') }}",
     {}),
    ("percent_and_format_specs",
     "{{ '%s' % 5 }}|{{ '%d' % 3.7 }}|{{ '%5s|%-5s|' % ('a', 'b') }}|{{ '%.2f' % 2.675 }}|{{ '%e' % 12345.678 }}|"
     "{{ '%+d %05d %x %o %X' % (5, 42, 255, 8, 255) }}|{{ '{:.2}'.format(1.5) }}|{{ '{}'.format(1.0) }}|"
     "{{ '{:10.3f}|'.format(3.14159) }}|{{ '{:e}'.format(1234.5) }}|{{ '{:%}'.format(0.25) }}|{{ '{:g}'.format(0.0001) }}|"
     "{{ '{:>10}|{:^10}|{:*^10}'.format('a', 'b', 'c') }}|{{ '{:+d}|{:x}|{:#x}|{:08.3f}|{:,.2f}'.format(5, 255, 255, -3.14159, 1234567.891) }}|"
     "{{ '{:.3}|{:.1}|{:.0}|{:.3}|{:.2}|{:.2}'.format(2.0, 2.0, 2.5, 123.0, 99.99, 0.00001234) }}|"
     "{{ 'abc'.startswith('', 3) }}{{ 'abc'.startswith('', 4) }}{{ 'abc'.startswith('c', -1) }}{{ 'abc'.endswith('b', 0, -1) }}"
     "{{ 'héllo'.startswith('l', 2) }}",
     {}),
    ("views_and_ranges_print", "{{ d.items() }}|{{ d.keys() }}|{{ d.values() }}|{{ range(3) }}|{{ range(1, 9, 2) }}|{{ range(3)|list }}",
     {"kwargs": {"d": {"a": 1, "b": [1, 2]}}}),
    ("macro_caller_args",
     "{% macro m(a) %}{{ caller(a) if caller is defined else 'nocaller' }}{% endmacro %}{{ m(1) }}|{% call(v) m(5) %}got {{ v }}{% endcall %}",
     {}),
    ("unary_minus_binds_before_pow", "{{ -2 ** 2 }}|{{ not 1 == 2 }}|{{ 1 if true else 2 if false else 3 }}|{{ 1e300 * 1e10 }}", {}),
    ("err_macro_too_many_args", "{% macro m(a, b) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }}|{{ m(1, 2, 3) }}", {}),
    ("err_macro_unknown_kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, z=2) }}", {}),
    ("err_compare_none", "{{ none < 1 }}", {}),
    ("err_len_of_none", "{{ none|length }}", {}),
    ("err_list_plus_tuple", "{{ [1] + (2,) }}", {}),
    ("loop_else_after_break_or_continue",
     "{% for i in [1,2] %}x{% break %}{% else %}else1{% endfor %}|{% for i in [1,2] %}{% continue %}{% else %}else2{% endfor %}|"
     "{% for i in [1,2] %}{% if i == 2 %}{% break %}{% endif %}{% else %}else3{% endfor %}|{% for i in [] %}{% else %}[{{ i }}]{% endfor %}",
     {}),
    ("loop_filtered_previtem", "{% for i in [1,2,3,4] if i is even %}{{ loop.previtem }}-{{ i }}-{{ loop.nextitem }}|{% endfor %}", {}),
    ("loop_target_shadows", "{% set x = 5 %}{% for x in [1] %}{{ x }}{% endfor %}{{ x }}", {}),
    ("undefined_through_filters",
     "{{ u|upper }}|{{ u|trim }}|{{ u|join }}|{{ u|list }}|{{ u|first }}|{{ u|string }}|{{ u|replace('a','b') }}|{{ u|items|list }}|"
     "{{ u|sort }}|{{ u|unique|list }}|{{ u|select|list }}|{{ u is none }}|{{ u is string }}|{{ u is iterable }}|{{ u is mapping }}|"
     "{{ u|capitalize }}{{ u|title }}{{ u|lower }}{{ u|wordcount }}{{ u|count }}{{ u|center(3) }}|{{ u|truncate(5) }}|{{ u|e }}|"
     "{{ u|max }}|{{ u|min }}|{{ u|sum }}|{{ u|reverse|list }}|{{ u|batch(2)|list }}|{{ u|map('upper')|list }}|{{ u|groupby('a') }}",
     {}),
    ("macros_nested_and_scoped",
     "{% macro outer() %}{% macro inner(x) %}<{{ x }}>{% endmacro %}{{ inner(1) }}{{ inner(2) }}{% endmacro %}{{ outer() }}|"
     "{% macro m() %}{% set ns = namespace(v=0) %}{% for i in range(3) %}{% set ns.v = ns.v + i %}{% endfor %}{{ ns.v }}{% endmacro %}"
     "{{ m() }}{{ m() }}", {}),
    ("ws_mixed_markers",
     "{{- 'a' -}}\n  {%- for m in messages -%}\n    {{ m.role }}\n  {% endfor -%}\n  end\n  {%- if true -%}\n    x\n  {%- endif -%}\n"
     "{%- set sys = messages[0] if messages[0].role == 'system' else none -%}\n[{{ sys }}]", {"messages": MSGS}),
    ("precedence_and_concat",
     "{{ 5 // 2 * 2.0 }} {{ 2 ** 3 ** 2 }} {{ 10 - 2 - 3 }} {{ 100 / 10 / 5 }} {{ 7 % 4 % 3 }} {{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} "
     "{{ -1 + -2 }} {{ +3 }} {{ --3 }} {{ 'abc' ~ 1 + 2 }} {{ 1 + 2 ~ 'x' }} {{ [1, 2, 3][1:][0] }} {{ 'hello'[1:4][::-1] }}", {}),
    ("tojson_more",
     "{{ messages|selectattr('role', 'eq', 'user')|map(attribute='content')|list|tojson }}|{{ messages|tojson(indent=2)|indent(4) }}|"
     "{{ {'b': 1, 'a': {'d': 1, 'c': 2}}|tojson(sort_keys=true) }}|{{ \"tab\tnl\n\"|tojson }}|{{ '</script>'|tojson }}|"
     "{{ '\u00ff\u0100\U0001F600'|tojson(ensure_ascii=true) }}", {"messages": MSGS}),
    ("err_indent_undefined", "{{ u|indent }}", {}),
    ("err_int_undefined", "{{ u|int }}", {}),
    ("err_float_undefined", "{{ u|float }}", {}),
    ("err_dictsort_undefined", "{{ u|dictsort }}", {}),
    # errors
    ("err_raise_exception", "line one\n{% if messages|length < 5 %}{{ raise_exception('Need 5 messages, got ' ~ messages|length ~ '!') }}{% endif %}",
     {"messages": MSGS}),
    ("err_raise_multiline", "\n\n  {{ raise_exception('first\\nsecond') }}", {}),
    ("err_str_plus_none", "{{ 'a' + none }}", {}),
    ("err_attr_of_undefined", "ok\n{{ nothing.here }}", {}),
    ("err_unknown_filter", "{{ 1|nosuchfilter }}", {}),
    ("err_unknown_filter_in_if_is_lazy", "{% if false %}{{ 1|nosuchfilter }}{% endif %}fine", {}),
    ("err_unknown_tag", "{% frobnicate %}", {}),
    ("err_unclosed_for", "{% for x in y %}\nbody\n", {}),
    ("err_unclosed_string", "{{ 'abc }}", {}),
    ("err_unclosed_var", "{{ 1 + ", {}),
    ("err_unclosed_comment", "{# never closed", {}),
    ("err_bad_bracket", "{{ (1, 2] }}", {}),
    ("err_division_by_zero", "{{ 1 / 0 }}", {}),
    ("err_unsafe_append", "{% set l = [] %}{% set _ = l.append(1) %}", {}),
    ("err_not_iterable", "{% for x in 5 %}{% endfor %}", {}),
    ("err_endif_without_if", "{% endif %}", {}),
    ("err_call_undefined", "{{ nope() }}", {}),
    ("err_in_non_string", "{{ 1 in 'abc' }}", {}),
    ("err_tojson_undefined", "{{ nope|tojson }}", {}),
    ("err_range_too_big", "{{ range(200000)|length }}", {}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--templates", default=os.path.join(DATA, "chat_templates"))
    ap.add_argument("--out", default=os.path.join(DATA, "chat_template_golden.json"))
    ap.add_argument("--no-adversarial", action="store_true")
    args = ap.parse_args()
    env = make_env()
    cases = []
    for fname in sorted(os.listdir(args.templates)):
        if not fname.endswith(".jinja"):
            continue
        name = fname[: -len(".jinja")]
        with open(os.path.join(args.templates, fname), encoding="utf-8") as f:
            source = f.read()
        for conv, agp, kwargs in VARIANTS + EXTRA_VARIANTS.get(name, []):
            c = CONVERSATIONS[conv]
            ctx = {
                "messages": c["messages"],
                "tools": c.get("tools"),
                "documents": c.get("documents"),
                "add_generation_prompt": agp,
                "special_tokens": special_for(name),
                "kwargs": kwargs,
            }
            suffix = "".join(f"_{k}={json.dumps(v)}" for k, v in kwargs.items())
            cases.append({"name": f"{name}/{conv}{'_gen' if agp else ''}{suffix}", "template_file": fname,
                          "context": ctx, "expected": render(env, source, ctx)})
    if not args.no_adversarial:
        for name, source, extra in ADVERSARIAL:
            ctx = {"messages": extra.get("messages", []), "tools": extra.get("tools"), "documents": extra.get("documents"),
                   "add_generation_prompt": extra.get("add_generation_prompt", False),
                   "special_tokens": extra.get("special_tokens", {}), "kwargs": extra.get("kwargs", {})}
            cases.append({"name": f"adversarial/{name}", "template": source, "context": ctx,
                          "expected": render(env, source, ctx)})
    out = {
        "generator": "tests/text/tools/make_chat_template_golden.py",
        "jinja2_version": jinja2.__version__,
        "python_version": sys.version.split()[0],
        "fixed_now": FIXED_NOW.isoformat(),
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    n_err = sum(1 for c in cases if "error" in c["expected"])
    print(f"{args.out}: {len(cases)} cases ({n_err} expected errors), Jinja2 {jinja2.__version__}")


if __name__ == "__main__":
    main()

"""Requests in other languages: the bilingual lexicon reads Spanish, French, German, Portuguese,
Italian and Dutch requests in English, leaves English ones alone, and tool search finds the
tool."""

from __future__ import annotations

import pytest

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.retrieval._lexicon import translate
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex

TOOLS = [
    IndexedTool("mcp__fs__read_file", "fs", "read_file", "Read a file from disk."),
    IndexedTool("mcp__fs__delete_file", "fs", "delete_file", "Delete a file from disk."),
    IndexedTool("mcp__gh__create_branch", "gh", "create_branch", "Create a new branch."),
    IndexedTool("mcp__gh__list_branches", "gh", "list_branches", "List the branches."),
    IndexedTool("mcp__pay__create_refund", "pay", "create_refund", "Refund a payment."),
    IndexedTool("mcp__pay__list_customers", "pay", "list_customers", "List customers."),
]


@pytest.mark.parametrize(
    ("request_text", "english"),
    [
        ("borra el archivo config.old", "delete file config.old"),  # Spanish
        ("supprime le fichier temporaire", "delete file temporaire"),  # French
        ("lies die Datei README.md", "read file README.md"),  # German
        ("criar uma nova branch", "create new branch"),  # Portuguese
        ("elenca i clienti", "list customer"),  # Italian
        # The general words, outside software (`_lexicon_general`).
        ("adapta mi currículo a esta oferta de trabajo", "adapt resume offer work"),
        ("elige al azar dos ganadores del sorteo", "choose random winner draw"),
        ("rédige la lettre de motivation", "draft letter motivation"),
        # Dutch (`_lexicon_dutch`).
        ("verwijder het bestand config.old", "delete file config.old"),
        ("toon mij de openstaande facturen van deze klant", "show open invoice customer"),
        ("schaal de deployment op naar 6 replicas", "scale deployment 6 replicas"),
    ],
)
def test_a_request_in_another_language_is_read_in_english(request_text: str, english: str) -> None:
    assert translate(request_text).text == english


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("borra el archivo viejo", "mcp__fs__delete_file"),
        ("rembourse le paiement", "mcp__pay__create_refund"),
        ("lies die Datei", "mcp__fs__read_file"),
        ("criar uma rama nova", "mcp__gh__create_branch"),
        ("elenca tutti i clienti", "mcp__pay__list_customers"),
    ],
)
def test_tool_search_finds_the_tool_a_foreign_request_asks_for(
    request_text: str, tool: str
) -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    assert index.search(request_text, 1, ranker="bm25")[0].name == tool


@pytest.mark.parametrize(
    "request_text",
    [
        "list all deployments",
        "the customer says they were charged twice",
        "open example.com in the browser",
        "delete the pod that won't die",
        "create a lista of the hat colours",  # one foreign-looking word is no evidence
        # "im" is German and "signer" French, but both are English too.
        "audit our program, im worried about missing signer checks",
        "prepare the salary and budget report for the board",
        # Dutch look-alikes: "land", "die", "door", "over", "was", "had", "van" are English.
        "land the pr and open a ticket for the team",
        "Ben was over the door limit, had to die van logs",
        # One foreign-looking word twice is still one word: "comment" is French "how".
        "fix that comment, the comment on REL-19 has the wrong version",
    ],
)
def test_an_english_request_is_never_changed(request_text: str) -> None:
    read = translate(request_text)

    assert (read.text, dict(read.glossed)) == (request_text, {})


def test_a_host_or_path_keeps_its_parts_that_look_like_function_words() -> None:
    assert translate("abrir la página example.com/de/la").text == "open page example.com/de/la"


def test_the_explanation_names_each_word_it_read_in_english() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    query = index.explain("lies die Datei", 1)[0].query

    assert dict(query.translations) == {"lies": "read", "datei": "file"}
    assert query.words == "read file"

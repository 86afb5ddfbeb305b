"""Which flag sets which field: the one table the CLI spells library errors with.

The library names the option a message is about by its field (``ModelcostError(..., fields="input_shapes")``,
``core.errors``); the CLI installs ``flag_for`` as the spelling of every such error (cli/app.py, and
``spell_for`` the command's as the runner starts one), so its red line and every note made of an error name the
flag a user types. Most
flags are the field with dashes (``batch_sizes`` -> ``--batch-sizes``); a timing option's flag is declared on its
BenchConfig field (``bench.base.option``: ``reuse_earlier`` -> ``--fresh``); the rest are in ``OTHER_FLAGS``."""

from __future__ import annotations

from modelcost.core.errors import dashed

# fields whose flag is not the field with dashes (and not a declared timing option)
OTHER_FLAGS = {
    "input_shapes": "--input-shape",  # repeatable: one input a flag
    "prompt_lens": "--prompt-len",
    "gen_lens": "--gen-len",
}
# fields one command spells its own way: llm takes its batch sizes (a sweep) as --batch-size
COMMAND_FLAGS = {("llm", "batch_sizes"): "--batch-size"}


def flag_for(field: str, command: str | None = None) -> str:
    """The flag that sets ``field`` (in ``command``, where one spells it its own way)."""
    if (command, field) in COMMAND_FLAGS:
        return COMMAND_FLAGS[command, field]
    if field in OTHER_FLAGS:
        return OTHER_FLAGS[field]
    from modelcost.cli.timing import declared

    for f in declared():
        if f.name == field and f.metadata["option"]["flag"]:
            return str(f.metadata["option"]["flag"]).split("/")[0]
    return dashed(field)


def spell_for(command: str | None) -> None:
    """Spell every library error's fields as the flags of ``command`` from now on (``cli.runner`` calls it as a
    command starts; the CLI installs the spelling of no command in particular at import)."""
    from modelcost.core.errors import spell_fields_with

    spell_fields_with(lambda field: flag_for(field, command))

"""Which flag sets which field: the one table the CLI spells library errors with.

The library names the option a message is about by its field (``ModelcostError(..., fields="input_shapes")``,
``core.errors``); the CLI installs ``flag_for`` as the spelling of every such error (cli/app.py), so its red line
and every note made of an error name the flag a user types. Most
flags are the field with dashes (``batch_sizes`` -> ``--batch-sizes``); a timing option's flag is declared on its
BenchConfig field (``bench.base.option``: ``reuse_earlier`` -> ``--fresh``); the rest are in ``OTHER_FLAGS``."""

from __future__ import annotations

from modelcost.core.errors import dashed

# fields whose flag is not the field with dashes (and not a declared timing option)
OTHER_FLAGS = {
    "input_shapes": "--input-shape",  # repeatable: one input a flag
    "prompt_lens": "--prompt-len",
    "gen_lens": "--gen-len",
    "batch_size_list": "--batch-size",  # llm: the batch sizes of a sweep, one flag
}


def flag_for(field: str) -> str:
    """The flag that sets ``field``."""
    if field in OTHER_FLAGS:
        return OTHER_FLAGS[field]
    from modelcost.cli.timing import declared

    for f in declared():
        if f.name == field and f.metadata["option"]["flag"]:
            return str(f.metadata["option"]["flag"]).split("/")[0]
    return dashed(field)

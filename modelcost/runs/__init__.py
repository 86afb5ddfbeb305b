"""One module per command, over shared steps. ``modelcost.api`` re-exports what a user calls.

    model.py      load once (``load``, ``LoadedModel``, ``RunOptions``) and the static analysis or a note
    gpu.py        this machine's GPU (the one owner), rooflines, what-if, per-layer profiles
    report.py     the report folder: checkpointed while a command runs, final at its end
    inference.py  ``analyze`` / ``bench``: load -> static -> plan -> sweep -> roofline -> layers -> what-if
    recommend.py  ``recommend``: the inference run, then the pure judging of ``decide.recommend``
    compare.py    ``compare`` / ``quantize``: two models, interleaved timing, the speedup's interval
    train.py      ``train``: the static training analysis, then the measured steps
    llm.py        ``llm``: counted prefill / decode, bounds, measured generation

Layer: above ``decide`` (which judges figures and measures nothing), below ``api`` (tests/test_layers.py).
Nothing here prints or knows a command-line flag.
"""

"""Sweeps: many models x backends x precisions x batch sizes on every GPU, into one SQLite results database.

plan.py reads the TOML plan; workers.py runs one worker per GPU on this machine (each config in its own child
process, pinned with CUDA_VISIBLE_DEVICES); ray_engine.py runs each config as a Ray task with one whole GPU;
db.py is the database (docs/SWEEP_SCHEMA.md); results.py reads it back (lists, reports, run-vs-run checks).
"""

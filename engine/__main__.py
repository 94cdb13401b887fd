"""``python -m engine`` is the ``boilerscope`` command; spark-submit runs this
file as the job's main script (the package itself shipped with ``--py-files``)::

    spark-submit --master yarn --py-files boilerscope.zip engine/__main__.py \\
        mine s3a://bucket/crawl/ --engine spark --out results/ --sigma 20 --min-len 10
"""
import os
import sys

if not __package__:
    # run as a file, its folder is sys.path[0]: there the engine's own modules
    # (coverage, config, memory, progress, ...) would shadow the top-level
    # packages of the same names, so the folder is taken off the path
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

from engine.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

"""``python -m engine`` is the ``boilerscope`` command; spark-submit runs this
file as the job's main script (the package itself shipped with ``--py-files``)::

    spark-submit --master yarn --py-files boilerscope.zip engine/__main__.py \\
        mine s3a://bucket/crawl/ --engine spark --out results/ --sigma 20 --min-len 10
"""
import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main())

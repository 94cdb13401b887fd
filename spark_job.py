"""The Spark job for spark-submit: ``engine.spark.main`` (spark-submit runs this
file as a script, with the package shipped by ``--py-files boilerscope.zip``;
it lives outside engine/ so that engine/tokenize.py never shadows the
standard library's tokenize on the script's path)::

    spark-submit --master yarn --py-files boilerscope.zip spark_job.py \\
        s3a://bucket/crawl/ --out results/ --sigma 20 --min-len 10
"""
import sys

from engine.spark import main

if __name__ == "__main__":
    sys.exit(main())

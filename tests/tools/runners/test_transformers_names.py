"""transformers' lazy names, first looked up by many threads at once (concurrent runs loading their first models):
without the lock in `transformers_names`, 7 of 8 threads got `ImportError: cannot import name ...` here."""

import subprocess
import sys

FIRST_LOOKUPS_AT_ONCE = """
import threading
from hugginggraph.tools.runners.transformers_names import transformers_names

NAMES = ["AutoModel", "AutoTokenizer", "pipeline", "AutoProcessor", "AutoModelForImageClassification",
         "AutoModelForCausalLM", "AutoFeatureExtractor", "AutoConfig"]
errors = []

def look_up(name):
    try:
        transformers_names(name)
    except Exception as error:
        errors.append(repr(error))

threads = [threading.Thread(target=look_up, args=(name,)) for name in NAMES]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors)
"""


def test_first_lookups_from_eight_threads_at_once_all_succeed():
    # A fresh interpreter: in this one transformers may be imported already, and the race is over.
    done = subprocess.run([sys.executable, "-c", FIRST_LOOKUPS_AT_ONCE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"

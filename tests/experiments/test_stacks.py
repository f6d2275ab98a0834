"""A p4scope process asked where it is (SIGUSR1) prints every thread's
stack and goes on: what the Ctrl-C tests collect from a run that hangs."""

import signal
import subprocess
import sys
import time

CODE = """
import threading, time
from p4scope import stacks
stacks.on_sigusr1()
threading.Thread(target=time.sleep, args=(30,), name="helper", daemon=True).start()
print("ready", flush=True); time.sleep(30)
"""


def test_sigusr1_prints_every_threads_stack_and_the_process_goes_on():
    p = subprocess.Popen([sys.executable, "-c", CODE], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(signal.SIGUSR1)
        time.sleep(1)
        assert p.poll() is None, "SIGUSR1 must not end the process"
    finally:
        p.kill()
        _, err = p.communicate(timeout=10)
    # the helper thread's stack, then the main thread's, at its last line
    # (line 6: "ready" and the sleep share it, so a signal that comes
    # before the print has returned finds it there too)
    assert err.count("Thread 0x") == 1 and err.count("Current thread 0x") == 1, err
    assert 'File "<string>", line 6 in <module>' in err, err

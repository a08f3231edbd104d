"""An Orca "speech server" that writes down what Orca would say instead of saying it.

scripts/screen-reader.sh runs Orca on a private, headless X display to check what a screen-reader user
hears from the app's accessibility mirror.  Orca normally hands its words to speech-dispatcher, but a
headless machine has no audio device and no running speech-dispatcher: there Orca's first utterance
blocks waiting for a synthesizer that never answers, so nothing after it is spoken (or logged).  A
speech server is only a Python module that Orca imports by name (the "speechServerFactory" setting),
so this one replaces the synthesizer with a log file: every utterance becomes one line

    <unix time>\t<KIND>\t<text>

in the file named by $ORCA_SPEECH_LOG, where KIND is SPEAK (an ordinary utterance), SAYALL (a chunk
of Say All), CHAR (a single character), KEY (key echo) or STOP (Orca interrupted itself; the script
drops these from its transcript).

Use: put this directory on PYTHONPATH and set "speechServerFactory": "speech_log" in Orca's
user-settings.conf (the script writes a throw-away settings directory for that).
"""
import os
import time

from orca import speechserver
from orca.speechserver import SayAllContext

_LOG = os.environ.get("ORCA_SPEECH_LOG", "/tmp/orca-speech.log")


def _log(kind, text):
    # One line per utterance: newlines inside it would break the tab-separated format.
    line = str(text).replace("\n", " ").replace("\t", " ")
    with open(_LOG, "a", encoding="utf-8") as f:
        f.write("%.3f\t%s\t%s\n" % (time.time(), kind, line))


class SpeechServer(speechserver.SpeechServer):
    """The one "voice" of this factory; Orca asks the module for its servers through the static methods."""

    _instance = None

    # --- what Orca calls on the module's class to find and pick a server ---------------------------------
    @staticmethod
    def getFactoryName():
        return "Speech log"

    @staticmethod
    def getSpeechServers():
        return [SpeechServer.getSpeechServer()]

    @staticmethod
    def getSpeechServer(info=None):
        if SpeechServer._instance is None:
            SpeechServer._instance = SpeechServer()
        return SpeechServer._instance

    @staticmethod
    def shutdownActiveServers():
        pass

    def getInfo(self):
        return ["Speech log", "speech_log"]

    def getVoiceFamilies(self):
        return []

    # --- speaking: written to the log -------------------------------------------------------------------
    def speak(self, text=None, acss=None, interrupt=True):
        if text:
            _log("SPEAK", text)

    def speakCharacter(self, character, acss=None):
        _log("CHAR", character)

    def speakKeyEvent(self, event, acss=None):
        _log("KEY", "%s %s" % (event.getKeyName(), event.getLockingStateString()))

    def sayAll(self, utteranceIterator, progressCallback):
        # Say All pulls utterances one at a time and waits to hear that each was spoken before asking for
        # the next.  A real synthesizer reports that from its audio thread; here each one is "spoken" at
        # once, from the main loop, so Orca's own bookkeeping (caret position, progress) stays the same.
        from gi.repository import GLib

        def next_chunk():
            try:
                context, _acss = next(utteranceIterator)
            except StopIteration:
                return False
            _log("SAYALL", context.utterance)
            context.currentOffset = context.endOffset
            progressCallback(context.copy(), SayAllContext.COMPLETED)
            return True

        GLib.idle_add(next_chunk)

    def stop(self):
        _log("STOP", "")

    # --- voice settings: nothing to change in a log -----------------------------------------------------
    def shutdown(self):
        pass

    def reset(self, text=None, acss=None):
        pass

    def updateCapitalizationStyle(self):
        pass

    def updatePunctuationLevel(self):
        pass

    def increaseSpeechRate(self, step=5):
        pass

    def decreaseSpeechRate(self, step=5):
        pass

    def increaseSpeechPitch(self, step=0.5):
        pass

    def decreaseSpeechPitch(self, step=0.5):
        pass

    def increaseSpeechVolume(self, step=0.5):
        pass

    def decreaseSpeechVolume(self, step=0.5):
        pass

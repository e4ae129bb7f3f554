"""The words too common to say what a lesson is about, for the point-of-use recall."""

from __future__ import annotations

# Words too common to say what a lesson is about: left out of a lesson's kept words and
# of the prompt's words alike.
_STOPWORDS_TEXT = (
    "the and for with that this from are was were have has had not but you your its "
    "can will would should could into when then than them they what which who how why "
    "all any each use used using also just only more most some such our out over very "
    "there their here about after before been being does did doing let make made please "
    "now get got want need see look show tell give try"
)
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

"""Checkers for the chapters' exercises, one module per chapter (``attn.exercises.ch03`` ...).

A checker takes the student's answer, raises ``AssertionError`` with a hint when it is wrong,
and returns a short message when it is right.
"""

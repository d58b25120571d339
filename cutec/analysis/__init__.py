"""Analyses shared by passes: facts about the IR computed once and read by many."""

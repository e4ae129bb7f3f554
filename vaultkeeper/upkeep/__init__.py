"""The report's upkeep sections: possible duplicates, decay of unused lessons and skills,
and supersession (a newer entry replacing an older one without deleting it).

Imports registry and store only.
"""

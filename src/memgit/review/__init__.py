"""People in the loop: proposals that wait for review (memgit review, approve, reject) and a
drive's health report (memgit audit); docs/review.md.
"""

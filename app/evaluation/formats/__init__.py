"""Parsers of the files a campaign exchanges: TREC runs and qrels (`trec_files`), TRECVID AVS XML runs
(`trecvid_xml`), topic files (`topics_file`), the master shot reference (`shot_reference`), reading files and uploads
as streams, gzip included (`streams`), and what the run parsers share (`scanning`). Moment runs and ground truth are
parsed in app.evaluation.moments.parse. Every parser raises one FormatError naming each bad line; bytes that are not
UTF-8 are reported by app.evaluation.errors.decode_utf8.
"""

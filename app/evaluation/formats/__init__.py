"""Parsers of the files a campaign exchanges: TREC runs and qrels (`trec_files`), TRECVID AVS XML runs
(`trecvid_xml`), topic files (`topics_file`), reading files and uploads as streams, gzip included (`streams`), what
the run parsers share (`scanning`), and UTF-8 decoding with line-numbered errors (`text`). Moment runs and ground
truth are parsed in app.evaluation.moments.parse. Every parser raises one FormatError naming each bad line.
"""

/*
 * utf8.h — strings from traces (command lines, file and function names) hold
 * whatever bytes the program had; JSON must be UTF-8. pes-replay's reports
 * and pes-dump's JSON repair them here before jansson writes them.
 */
#ifndef PES_REPLAY_UTF8_H
#define PES_REPLAY_UTF8_H

/* s with each byte that starts no valid UTF-8 sequence (RFC 3629: no
 * overlong forms, surrogates or code points above U+10FFFF) replaced by
 * U+FFFD; malloc'd, NULL without memory; NULL s is "". */
char *pes_report_utf8(const char *s);

#endif

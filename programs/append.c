/* append.c: a sequential append benchmark for lmdb-regress's --program.
 *
 * Written for this project. It makes COUNT (default 1,000,000) puts with MDB_APPEND of
 * 4-byte big-endian integer keys 0, 1, 2, ... (so that byte order is append order) and
 * 100-byte zero values, committing every 1,000 puts, in an environment opened with
 * MDB_NOSYNC and without MDB_WRITEMAP, in ./testdb (which it creates). It prints how long
 * the puts and commits took, which `--program-figure 'in ([0-9.]+) s'` could take in place
 * of the process's wall time.
 *
 *   usage: append [COUNT]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lmdb.h"

#define PER_TXN 1000
#define VALUE_SIZE 100

static void check(int rc, const char *what) {
	if (rc != MDB_SUCCESS) {
		fprintf(stderr, "append: %s: %s\n", what, mdb_strerror(rc));
		exit(2);
	}
}

int main(int argc, char **argv) {
	unsigned long count = 1000000;
	if (argc > 1) {
		char *end;
		count = strtoul(argv[1], &end, 10);
		if (*argv[1] == '\0' || *end != '\0') {
			fprintf(stderr, "usage: append [COUNT]\n");
			return 64;
		}
	}
	if (mkdir("testdb", 0755) != 0 && errno != EEXIST) {
		perror("append: mkdir testdb");
		return 2;
	}
	/* Each entry takes under 128 bytes of a leaf page; twice that, and room for branches. */
	size_t map_size = (size_t)count * 256 + (64u << 20);
	MDB_env *env;
	check(mdb_env_create(&env), "mdb_env_create");
	check(mdb_env_set_mapsize(env, map_size), "mdb_env_set_mapsize");
	check(mdb_env_open(env, "testdb", MDB_NOSYNC, 0664), "mdb_env_open");

	unsigned char key_bytes[4];
	char value_bytes[VALUE_SIZE];
	memset(value_bytes, 0, sizeof value_bytes);
	MDB_val key = {sizeof key_bytes, key_bytes};
	MDB_val value = {sizeof value_bytes, value_bytes};

	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	for (unsigned long i = 0; i < count; i++) {
		if (txn == NULL) {
			check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
			check(mdb_dbi_open(txn, NULL, 0, &dbi), "mdb_dbi_open");
		}
		key_bytes[0] = (unsigned char)(i >> 24);
		key_bytes[1] = (unsigned char)(i >> 16);
		key_bytes[2] = (unsigned char)(i >> 8);
		key_bytes[3] = (unsigned char)i;
		key.mv_size = sizeof key_bytes;
		key.mv_data = key_bytes;
		value.mv_size = sizeof value_bytes;
		value.mv_data = value_bytes;
		check(mdb_put(txn, dbi, &key, &value, MDB_APPEND), "mdb_put");
		if ((i + 1) % PER_TXN == 0) {
			check(mdb_txn_commit(txn), "mdb_txn_commit");
			txn = NULL;
		}
	}
	if (txn != NULL)
		check(mdb_txn_commit(txn), "mdb_txn_commit");
	clock_gettime(CLOCK_MONOTONIC, &end);

	MDB_stat st;
	check(mdb_env_stat(env, &st), "mdb_env_stat");
	if (st.ms_entries != count) {
		fprintf(stderr, "append: %lu entries put, but the database holds %zu\n", count, st.ms_entries);
		return 3;
	}
	mdb_env_close(env);
	double s = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
	printf("%lu appends in %.6f s\n", count, s);
	return 0;
}

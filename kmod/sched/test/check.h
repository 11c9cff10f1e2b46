/* A minimal test harness: CHECK records a failure and goes on. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond)                                                              \
	do {                                                                     \
		check_count++;                                                   \
		if (!(cond)) {                                                   \
			check_failures++;                                        \
			fprintf(stderr, "%s:%d: %s: CHECK failed: %s\n", __FILE__, \
				__LINE__, __func__, #cond);                      \
		}                                                                \
	} while (0)

/* |got - want| <= tol * want */
#define CHECK_NEAR(got, want, tol)                                               \
	do {                                                                     \
		double g_ = (double)(got), w_ = (double)(want);                  \
		check_count++;                                                   \
		if (g_ < w_ - (tol) * w_ || g_ > w_ + (tol) * w_) {              \
			check_failures++;                                        \
			fprintf(stderr, "%s:%d: %s: %s = %.6g, want %.6g +-%g%%\n", \
				__FILE__, __LINE__, __func__, #got, g_, w_,      \
				100.0 * (tol));                                  \
		}                                                                \
	} while (0)

void tests_rules(void);
void tests_events(void);
void tests_model(void);

#endif

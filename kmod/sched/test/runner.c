/* Runs every unit test group; exits 1 on any failed check. */
#include "check.h"

int check_failures;
int check_count;

int main(void)
{
	tests_rules();
	tests_events();
	tests_model();
	printf("unit: %d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}

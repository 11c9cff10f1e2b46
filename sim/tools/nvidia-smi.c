// SPDX-License-Identifier: MIT
/*
 * An nvidia-smi look-alike over NVML, dynamically linked to
 * libnvidia-ml.so.1 so that libcgpu, preloaded in a container, changes what
 * it shows exactly as it does for the real tool. Supports the default table,
 * -L, --query-gpu=FIELDS and --query-compute-apps=pid,gpu_uuid,used_memory, with
 * --format=csv[,noheader][,nounits].
 * Fan, temperature, power and utilisation are not simulated: shown as N/A.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgpu_nvml.h"

struct gpu {
	unsigned int index;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
};

static int load(unsigned int i, struct gpu *g)
{
	nvmlDevice_t d;

	g->index = i;
	return nvmlDeviceGetHandleByIndex_v2(i, &d) ||
	       nvmlDeviceGetName(d, g->name, sizeof(g->name)) ||
	       nvmlDeviceGetUUID(d, g->uuid, sizeof(g->uuid)) ||
	       nvmlDeviceGetPciInfo_v3(d, &g->pci) ||
	       nvmlDeviceGetMemoryInfo(d, &g->mem);
}

static void list(const struct gpu *g)
{
	printf("GPU %u: %s (UUID: %s)\n", g->index, g->name, g->uuid);
}

/* Cells are padded to nvidia-smi's column widths: 41, 22 and 22. */
static void row(const char *a, const char *b, const char *c)
{
	printf("|%-41s|%-22s|%-22s|\n", a, b, c);
}

static void table_head(void)
{
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "N/A";
	char stamp[64], line[128];
	int cuda = 0;
	time_t now = time(NULL);
	const char *rule = "+---------------------------------------------------------------------------------------+";

	nvmlSystemGetDriverVersion(driver, sizeof(driver));
	nvmlSystemGetCudaDriverVersion_v2(&cuda);
	strftime(stamp, sizeof(stamp), "%a %b %e %H:%M:%S %Y", localtime(&now));
	printf("%s\n%s\n", stamp, rule);
	snprintf(line, sizeof(line),
		 " NVIDIA-SMI %-22s Driver Version: %-12s CUDA Version: %d.%d",
		 driver, driver, cuda / 1000, cuda % 1000 / 10);
	printf("|%-87s|\n", line);
	puts("|-----------------------------------------+----------------------+----------------------+");
	row(" GPU  Name                 Persistence-M", " Bus-Id        Disp.A", " Volatile Uncorr. ECC");
	row(" Fan  Temp   Perf          Pwr:Usage/Cap", "         Memory-Usage", " GPU-Util  Compute M.");
	row("", "", "               MIG M.");
	puts("|=========================================+======================+======================|");
}

static void table_row(const struct gpu *g)
{
	char a[64], b[64], usage[48];

	snprintf(a, sizeof(a), " %3u  %-29.29s%4s  ", g->index, g->name, "N/A");
	snprintf(b, sizeof(b), " %-16s %3s ", g->pci.busId, "N/A");
	row(a, b, "                  N/A ");
	snprintf(usage, sizeof(usage), "%lluMiB / %lluMiB", g->mem.used >> 20,
		 g->mem.total >> 20);
	snprintf(b, sizeof(b), " %20s ", usage);
	row(" N/A   N/A    N/A           N/A /  N/A  ", b, "      N/A     Default ");
	row("", "", "                  N/A ");
	puts("+-----------------------------------------+----------------------+----------------------+");
}

/* The process table, as the real tool prints it; names are not known (N/A). */
static void table_processes(unsigned n)
{
	nvmlProcessInfo_t p[64];
	int any = 0;

	puts("");
	puts("+---------------------------------------------------------------------------------------+");
	printf("|%-87s|\n", " Processes:");
	printf("|%-87s|\n", "  GPU   GI   CI        PID   Type   Process name                            GPU Memory ");
	printf("|%-87s|\n", "        ID   ID                                                             Usage      ");
	puts("|=======================================================================================|");
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;
		unsigned int count = 64;

		if (nvmlDeviceGetHandleByIndex_v2(i, &d) ||
		    nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p))
			continue;
		for (unsigned k = 0; k < count; k++, any = 1)
			printf("|  %4u   N/A  N/A  %9u      C   %-37s %7lluMiB |\n", i,
			       p[k].pid, "N/A", p[k].usedGpuMemory >> 20);
	}
	if (!any)
		printf("|%-87s|\n", "  No running processes found");
	puts("+---------------------------------------------------------------------------------------+");
}

static int field(const struct gpu *g, const char *f, int units, char *out,
		 size_t len)
{
	const char *mib = units ? " MiB" : "";

	if (!strcmp(f, "index"))
		snprintf(out, len, "%u", g->index);
	else if (!strcmp(f, "name") || !strcmp(f, "gpu_name"))
		snprintf(out, len, "%s", g->name);
	else if (!strcmp(f, "uuid") || !strcmp(f, "gpu_uuid"))
		snprintf(out, len, "%s", g->uuid);
	else if (!strcmp(f, "pci.bus_id") || !strcmp(f, "gpu_bus_id"))
		snprintf(out, len, "%s", g->pci.busId);
	else if (!strcmp(f, "memory.total"))
		snprintf(out, len, "%llu%s", g->mem.total >> 20, mib);
	else if (!strcmp(f, "memory.used"))
		snprintf(out, len, "%llu%s", g->mem.used >> 20, mib);
	else if (!strcmp(f, "memory.free"))
		snprintf(out, len, "%llu%s", g->mem.free >> 20, mib);
	else if (!strcmp(f, "driver_version"))
		return nvmlSystemGetDriverVersion(out, (unsigned)len) ? -1 : 0;
	else
		return -1;
	return 0;
}

/* A compute app: a process holding memory on a GPU (--query-compute-apps). */
struct app {
	const struct gpu *gpu;
	unsigned int pid;
	unsigned long long bytes;
};

static int app_field(const struct app *a, const char *f, int units, char *out, size_t len)
{
	if (!strcmp(f, "pid"))
		snprintf(out, len, "%u", a->pid);
	else if (!strcmp(f, "used_memory") || !strcmp(f, "used_gpu_memory"))
		snprintf(out, len, "%llu%s", a->bytes >> 20, units ? " MiB" : "");
	else
		return field(a->gpu, f, units, out, len);
	return 0;
}

/*
 * FIELDS of n rows in CSV, the header first unless FORMAT says noheader; cell(row i,
 * field, units, out) gives each value, -1 for a field it does not know.
 */
static int csv(unsigned n, const char *fields, const char *format,
	       int (*cell)(unsigned i, const char *f, int units, char *out, size_t len))
{
	int header = !strstr(format, "noheader");
	int units = !strstr(format, "nounits");
	char buf[1024], out[128];

	if (strncmp(format, "csv", 3)) {
		fprintf(stderr, "Only CSV output is supported.\n");
		return 2;
	}
	for (unsigned i = 0; i <= n; i++) {
		char *save = NULL, *tok;

		if (i == 0 && !header)
			continue;
		snprintf(buf, sizeof(buf), "%s", fields);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (i == 0) {
				printf("%s%s", tok == buf ? "" : ", ", tok);
				continue;
			}
			if (cell(i - 1, tok, units, out, sizeof(out))) {
				fprintf(stderr, "Field \"%s\" is not a valid field to query.\n",
					tok);
				return 2;
			}
			printf("%s%s", tok == buf ? "" : ", ", out);
		}
		putchar('\n');
	}
	return 0;
}

static struct gpu gpus[64];
static struct app apps[64 * 64];

static int gpu_cell(unsigned i, const char *f, int units, char *out, size_t len)
{
	return field(&gpus[i], f, units, out, len);
}

static int app_cell(unsigned i, const char *f, int units, char *out, size_t len)
{
	return app_field(&apps[i], f, units, out, len);
}

/* NVML's processes of every GPU, in GPU order, as the real tool lists compute apps. */
static unsigned load_apps(unsigned n)
{
	unsigned napps = 0;

	for (unsigned i = 0; i < n; i++) {
		nvmlProcessInfo_t p[64];
		unsigned int count = 64;
		nvmlDevice_t d;

		if (nvmlDeviceGetHandleByIndex_v2(i, &d) ||
		    nvmlDeviceGetComputeRunningProcesses_v3(d, &count, p))
			continue;
		for (unsigned k = 0; k < count; k++)
			apps[napps++] = (struct app){ &gpus[i], p[k].pid, p[k].usedGpuMemory };
	}
	return napps;
}

int main(int argc, char **argv)
{
	unsigned int n = 0;
	const char *fields = NULL, *app_fields = NULL, *format = "csv";
	int list_only = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-L") || !strcmp(argv[i], "--list-gpus"))
			list_only = 1;
		else if (!strncmp(argv[i], "--query-gpu=", 12))
			fields = argv[i] + 12;
		else if (!strncmp(argv[i], "--query-compute-apps=", 21))
			app_fields = argv[i] + 21;
		else if (!strncmp(argv[i], "--format=", 9))
			format = argv[i] + 9;
		else {
			fprintf(stderr, "Invalid combination of input arguments: %s\n",
				argv[i]);
			return 2;
		}
	}
	if (nvmlInit_v2() || nvmlDeviceGetCount_v2(&n)) {
		puts("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
		return 9;
	}
	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++) {
		if (load(i, &gpus[i])) {
			fprintf(stderr, "Unable to read GPU %u\n", i);
			return 15;
		}
	}
	if (fields)
		return csv(n, fields, format, gpu_cell);
	if (app_fields)
		return csv(load_apps(n), app_fields, format, app_cell);
	if (list_only) {
		for (unsigned i = 0; i < n; i++)
			list(&gpus[i]);
	} else {
		table_head();
		for (unsigned i = 0; i < n; i++)
			table_row(&gpus[i]);
		table_processes(n);
	}
	nvmlShutdown();
	return 0;
}

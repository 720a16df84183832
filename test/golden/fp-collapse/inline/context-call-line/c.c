__attribute__((noinline)) void leaf(void) { __asm__ volatile(""); }
__attribute__((noinline)) int mid(void)
{
	leaf();
	return 7;
}
int main(void)
{
	int r = mid();
	return r - 7;
}

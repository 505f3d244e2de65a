"""The scenarios shipped with cellopt, one TOML file each (``cellopt scenarios`` lists them).

The files live at the top of the repository; installing cellopt maps this folder into the
package as ``cellopt.topologies``, so that ``cellopt run NAME`` finds them from any folder.
"""
